// Package webui serves `deployer ui`: a read-only web view of the locks,
// stacks and state history of a project, over the same backends and use
// cases the CLI uses (docs/ui.md). It owns the HTTP handler and its
// safety checks (guard.go), the one lock poller shared by every viewer
// (poller.go), the pages (pages.go, assets/) and the server-side SVG of
// the stack graph (graph.go). It reads through functions the cli package
// binds (Config); it never opens a backend itself.
package webui
