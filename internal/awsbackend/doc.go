// Package awsbackend owns what deployer's AWS backends share (docs/aws.md):
// loading aws.Config from the SDK's standard chain (profile, region,
// credentials, AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL_DYNAMODB), parsing the
// dynamodb:// and s3:// backend URLs, the path-style option for MinIO, the
// one S3 client interface (S3API) of the S3 lock and state backends, the
// probe that refuses an S3 server ignoring conditional writes, the error
// classifier that names the resource and the fix, and the S3 bucket both S3
// backends live in: InitBuckets / EnsureBucket (`deployer backend init`,
// docs/aws.md#setup) and the Report every AWS setup returns.
//
// The backends themselves, and the DynamoDB lock table's definition, live in
// internal/lockmgr/dynamodb, internal/lockmgr/s3 and internal/statestore/s3;
// the backend registry (internal/backends) opens them by URL scheme.
package awsbackend
