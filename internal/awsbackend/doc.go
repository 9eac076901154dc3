// Package awsbackend owns what deployer's AWS backends share (docs/aws.md):
// loading aws.Config from the SDK's standard chain (profile, region,
// credentials, AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL_DYNAMODB), parsing the
// dynamodb:// and s3:// backend URLs, the path-style option for MinIO, the
// probe that refuses an S3 server ignoring conditional writes, the error
// classifier that names the resource and the fix, and `deployer backend init`
// (Init), which creates the DynamoDB table and the S3 bucket of docs/aws.md#terraform.
//
// The backends themselves live in internal/lockmgr/dynamodb,
// internal/lockmgr/s3 and internal/statestore/s3.
package awsbackend
