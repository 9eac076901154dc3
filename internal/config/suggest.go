package config

// Suggest returns the candidate closest to s (edit distance at most 2, or a
// case-insensitive match), or "" when none is close: the "did you mean" of
// command-line names checked against deployer.yaml.
func Suggest(s string, candidates []string) string { return suggest(s, candidates) }
