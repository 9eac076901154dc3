// Package policy owns policy as code on plans (docs/policy.md): it loads
// Rego files from directories within bounds, compiles them with the Open
// Policy Agent library (Rego v1, in process, without the builtins that read
// files, the network or the environment), evaluates each policy's deny and
// warn rules against a plan's JSON document within a time and a memory
// bound, digests the files for saved plans, and runs the policies' own Rego
// unit tests. It knows nothing of deploy or the CLI: callers hand it the
// input document and render its Report.
package policy
