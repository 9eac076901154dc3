// Package inputfile reads the files deployer is handed by a user or by
// another tool (deployer.yaml, saved plans, state files for `state push`,
// a Command component's outputs file) with two checks made before a byte is
// parsed: the path must name a regular file (not /dev/zero, a FIFO or a
// directory) and its size must be within the limit given for that kind of
// file. See docs/configuration.md, "Limits on input".
package inputfile
