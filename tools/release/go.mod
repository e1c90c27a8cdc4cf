module github.com/leadership-go/leadership/tools/release

go 1.25.9

require (
	go.uber.org/goleak v1.3.0
	golang.org/x/exp v0.0.0-20260218203240-3dfff04db8fa
	golang.org/x/mod v0.34.0
	golang.org/x/tools v0.42.0
)

require golang.org/x/sync v0.19.0 // indirect
