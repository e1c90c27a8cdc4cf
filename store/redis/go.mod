module github.com/leadership-go/leadership/store/redis

go 1.25.9

require (
	github.com/kvtools/redis v1.2.1
	github.com/kvtools/valkeyrie v1.0.0
	github.com/leadership-go/leadership v0.1.0
	github.com/redis/go-redis/v9 v9.21.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/davecgh/go-spew v1.1.2-0.20180830191138-d8f796af33cc // indirect
	github.com/pmezard/go-difflib v1.0.1-0.20181226105442-5d4384ee4fb2 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	github.com/stretchr/testify v1.11.1 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
