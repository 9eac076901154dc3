package pulumi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

	"github.com/deployer-dev/deployer/internal/backendurl"
	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

// Kinds is the Pulumi engine's kind catalog (docs/kinds.md). Preview and
// Refresh cover every component of every kind: `pulumi preview` and
// `pulumi refresh` of the stack's program (docs/pulumi.md, "What a run
// does"). A kind of one resource can be imported: that resource gets
// Pulumi's import option (docs/operations.md#import).
func (e *Engine) Kinds() []engine.Kind { return Catalog() }

// Catalog is the kind catalog of every Pulumi engine (Engine.Kinds),
// read without building one.
func Catalog() []engine.Kind {
	out := make([]engine.Kind, 0, len(catalog))
	every := engine.Coverage{Covered: true}
	for _, name := range Kinds() {
		out = append(out, engine.Kind{Name: name, ReplaceOn: ReplaceOn(name), Preview: every, Refresh: every,
			Import: importRule(catalog[name])})
	}
	return out
}

// PluginMissingError says which provider plugins the components need that
// Pulumi cannot find, and the commands that install them.
type PluginMissingError struct {
	Plugins []Plugin
}

// Plugin is a resource provider plugin a component needs: its package name
// ("aws", "random") and the version config pins ("" for any).
type Plugin struct {
	Name, Version string
	Component     string // the first component needing it
}

// InstallCommand is the command that installs p.
func (p Plugin) InstallCommand() string {
	cmd := "pulumi plugin install resource " + p.Name
	if p.Version != "" {
		cmd += " " + p.Version
	}
	return cmd
}

func (e *PluginMissingError) Error() string {
	var b strings.Builder
	for i, p := range e.Plugins {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "the Pulumi provider plugin %q (needed by %s) is not installed: run `%s`", p.Name, p.Component, p.InstallCommand())
		if p.Version == "" {
			b.WriteString(" (or pin a version with config.version and install that one)")
		}
	}
	b.WriteString(", or put pulumi-resource-" + e.Plugins[0].Name + " on PATH")
	return b.String()
}

// Preflight checks (preflight), before any lock is taken, what the Pulumi
// components of req.Components need: a file:// or s3:// state backend to hold Pulumi's, the
// CLI (installed first with --install-pulumi), the passphrase of the
// passphrase secrets provider, and every provider plugin
// (*PluginMissingError with the install commands).
func (e *Engine) Preflight(ctx context.Context, req engine.PreflightRequest) error {
	var kinds []string
	seen := map[string]bool{}
	for _, c := range req.Components {
		if IsPulumiKind(c.Kind) && !seen[c.Kind] {
			seen[c.Kind] = true
			kinds = append(kinds, c.Kind)
		}
	}
	if len(kinds) == 0 {
		return nil
	}
	sort.Strings(kinds)
	if b := e.opts.BackendURL; !strings.HasPrefix(b, "file://") && !strings.HasPrefix(b, "s3://") {
		return fmt.Errorf("kinds %s run through Pulumi, whose state must live under a file:// or s3:// state backend, not %s", strings.Join(kinds, ", "), backendurl.Redact(b))
	}
	cmd, err := e.command(ctx)
	var noCLI *CLIMissingError
	if errors.As(err, &noCLI) {
		noCLI.Kinds = kinds // the scope's, not every kind the engine has
	}
	if err != nil {
		return err
	}
	if strings.HasPrefix(e.opts.SecretsProvider, "passphrase") &&
		os.Getenv("PULUMI_CONFIG_PASSPHRASE") == "" && os.Getenv("PULUMI_CONFIG_PASSPHRASE_FILE") == "" {
		return errors.New("pulumi.secrets_provider is passphrase but PULUMI_CONFIG_PASSPHRASE is not set: export it (the same value on every run), or use an awskms:// secrets provider")
	}
	need := neededPlugins(req.Components)
	if len(need) == 0 {
		return nil
	}
	var notOnPath []Plugin
	for _, p := range need {
		if _, err := exec.LookPath("pulumi-resource-" + p.Name); err != nil {
			notOnPath = append(notOnPath, p)
		}
	}
	if len(notOnPath) == 0 {
		return nil
	}
	missing := missingPlugins(notOnPath, cachedPlugins(cmd.path))
	if len(missing) > 0 {
		installed, err := installedPlugins(ctx, cmd.path)
		if err != nil {
			return err
		}
		missing = missingPlugins(notOnPath, installed)
	}
	if len(missing) > 0 {
		return &PluginMissingError{Plugins: missing}
	}
	return nil
}

// neededPlugins returns the provider plugins comps register resources of,
// by package name: the package of each type token (PulumiResource's
// config.type, the tokens of the AWS kinds), with config.version when set.
func neededPlugins(comps []plan.Step) []Plugin {
	byName := map[string]Plugin{}
	for _, c := range comps {
		k, ok := Lookup(c.Kind)
		if !ok {
			continue
		}
		tokens := k.Tokens
		version := ""
		if c.Kind == "PulumiResource" {
			tokens = []string{str(c.Config, "type", "")}
			version = str(c.Config, "version", "")
		}
		for _, t := range tokens {
			pkg, _, ok := strings.Cut(t, ":")
			if !ok || pkg == "pulumi" {
				continue
			}
			if _, dup := byName[pkg]; !dup {
				byName[pkg] = Plugin{Name: pkg, Version: version, Component: c.Address}
			}
		}
	}
	out := make([]Plugin, 0, len(byName))
	for _, n := range keys(byName) {
		out = append(out, byName[n])
	}
	return out
}

// missingPlugins returns the plugins of need that installed (name ->
// versions without "v") lacks.
func missingPlugins(need []Plugin, installed map[string]map[string]bool) []Plugin {
	var missing []Plugin
	for _, p := range need {
		if vs := installed[p.Name]; len(vs) > 0 && (p.Version == "" || vs[strings.TrimPrefix(p.Version, "v")]) {
			continue
		}
		missing = append(missing, p)
	}
	return missing
}

// cachedPlugins returns what `pulumi plugin ls` listed when last run with
// the CLI at cli, if neither the CLI binary nor the plugin directory changed
// since (clicache.go); else nil.
func cachedPlugins(cli string) map[string]map[string]bool {
	facts := loadFacts(cli)
	dir := pluginDir()
	if facts == nil || facts.PluginDir != dir || facts.PluginDirTime == 0 || facts.PluginDirTime != dirTime(dir) {
		return nil
	}
	return facts.Plugins
}

// installedPlugins runs `pulumi plugin ls --json` and returns the resource
// plugins in the plugin cache: name -> versions (without "v"). It records
// them in deployer's cache of the CLI (cachedPlugins).
func installedPlugins(ctx context.Context, cli string) (map[string]map[string]bool, error) {
	dir := pluginDir()
	before := dirTime(dir)
	out, err := runQuiet(ctx, cli, "plugin", "ls", "--json")
	if err != nil {
		return nil, fmt.Errorf("list the installed Pulumi plugins: %w", err)
	}
	var list []struct {
		Name    string `json:"name"`
		Kind    string `json:"kind"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("read `pulumi plugin ls --json`: %w", err)
	}
	m := map[string]map[string]bool{}
	for _, p := range list {
		if p.Kind != "resource" {
			continue
		}
		if m[p.Name] == nil {
			m[p.Name] = map[string]bool{}
		}
		m[p.Name][strings.TrimPrefix(p.Version, "v")] = true
	}
	if facts := loadFacts(cli); facts != nil && before != 0 && before == dirTime(dir) {
		facts.PluginDir, facts.PluginDirTime, facts.Plugins = dir, before, m
		saveFacts(cli, *facts)
	}
	return m, nil
}
