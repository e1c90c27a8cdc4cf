module github.com/leadership-go/leadership

go 1.25

require (
	github.com/kvtools/valkeyrie v1.0.0 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	github.com/stretchr/testify v1.11.1 // indirect
	go.uber.org/goleak v1.3.0 // indirect
)
