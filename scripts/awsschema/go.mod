module github.com/deployer-dev/deployer/scripts/awsschema

go 1.26.8
