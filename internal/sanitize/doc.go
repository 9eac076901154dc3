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
// prefixes (a line starting with "::" after blanks, "##[" anywhere), so
// text from data neither drives the terminal nor writes a workflow
// command. Fence and CodeBlock choose a Markdown code fence longer than
// any run of backticks in the content; CodeSpan and Markdown put text in a
// code span or a table cell. Command shell-quotes a command to paste.
//
// It imports nothing of deployer's, so every layer (planview, ghactions,
// cli, deploy) uses it. Output a component writes itself (a Command
// component's stdout) is not data of deployer's and is not sanitised.
package sanitize
