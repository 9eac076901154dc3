// Package sanitize is deployer's one sanitiser for text printed from data
// (docs/secrets.md#printed-data-is-sanitised): config keys, component
// names, delete commands, policy messages and the fields of a lock record
// read from a backend, wherever they are shown: the terminal, workflow
// commands (annotations, log groups), the job summary and the pull request
// comment.
//
// Line and Text escape control characters (C0 but tab, DEL, C1, invalid
// UTF-8, bidirectional overrides, line and paragraph separators) the way
// Go quotes them (\r, \x1b, \u202e), and neutralise workflow-command
// prefixes (a line starting with "::" after any Unicode blank the GitHub
// runner trims, Blank; "##[" anywhere), so text from data neither drives
// the terminal nor writes a workflow command. Commands neutralises only
// the workflow-command prefixes, for a component's own output under
// GitHub Actions. Fence and CodeBlock choose a Markdown code fence longer
// than any run of backticks in the content; CodeSpan and Markdown put text
// in a code span or a table cell, inert (no mention, link, image, HTML or
// "<!--"). Command shell-quotes a command to paste.
//
// It imports nothing of deployer's, so every layer (planview, ghactions,
// cli, deploy) uses it. It does not mask secrets: callers mask data first
// and escape it after (docs/secrets.md#masked-everywhere).
package sanitize
