module github.com/bhsim/bhsim

go 1.26.0

require (
	github.com/google/btree v1.1.3
	github.com/stretchr/testify v1.12.1
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
