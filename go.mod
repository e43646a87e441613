module github.com/colonyrt/colony

go 1.26.8

require (
	github.com/puzpuzpuz/xsync/v3 v3.5.1
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.50.0
	pgregory.net/rapid v1.3.0
)

require github.com/stretchr/testify v1.12.1 // indirect
