// Package s3 is the s3://BUCKET[/prefix] state backend
// (docs/aws.md, docs/design.md#state-layout). Layout:
//
//	{prefix}/stacks/{stack}/{env}/state.json
//	{prefix}/stacks/{stack}/{env}/history/{YYYY-MM-DDTHH-MM-SS.mmmZ}-{serial}.json
//
// Write PUTs the history snapshot with If-None-Match: *, then state.json with
// If-Match: <ETag read> (If-None-Match: * for the first write); a failed
// precondition is a *statestore.ConflictError. Version is the ETag. SSE
// (AES256 or aws:kms + key id) is applied to every PUT. Works with bucket
// versioning on (the Terraform of docs/aws.md#terraform turns it on). Before
// its first write per process and bucket (or when opened for a command that
// writes) it refuses a server that does not enforce conditional writes
// (CheckWrites, awsbackend.EnsureConditionalWrites); reads never write, so a
// read-only role can plan and inspect.
package s3
