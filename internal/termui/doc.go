// Package termui is what a user sees of deployer on a terminal or in a
// log: IOStreams (the only output path, prompts only on a TTY, colour only
// without NO_COLOR), a deploy's live progress, the lines of a wait for a
// held lock, errors with the remedy the CLI adds (Remedy, ErrorJSON), and
// the human and JSON views of the use cases' results that the commands
// print (docs/design.md#package-map). It opens no backend and runs no use
// case: the commands (internal/cli) and the wiring (internal/app) hand it
// what to show.
package termui
