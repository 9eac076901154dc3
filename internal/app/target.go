package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/exitcode"
)

// EnvironmentVar names the environment of a command run without -e.
const EnvironmentVar = "DEPLOYER_ENVIRONMENT"

// TargetFlags are -s/--stack, -e/--environment and the narrowing flags.
type TargetFlags struct {
	Stack, Env, Service, Component string
	// Components and Exclude are plan's, deploy's and destroy's
	// --component (repeatable, comma lists) and --exclude (bindMany).
	// validateFlags keeps a single --component in Component.
	Components, Exclude []string
	// EnvFromVar: Env came from DEPLOYER_ENVIRONMENT, not -e, and its
	// errors name the variable.
	EnvFromVar bool
}

func (t *TargetFlags) Bind(cmd *cobra.Command, narrow bool) {
	cmd.Flags().StringVarP(&t.Stack, "stack", "s", "", "stack name (default: stack: of deployer.yaml)")
	cmd.Flags().StringVarP(&t.Env, "environment", "e", "", "environment name (alias --env)")
	if narrow {
		cmd.Flags().StringVar(&t.Service, "service", "", "act on one service (service-level lock)")
		cmd.Flags().StringVar(&t.Component, "component", "", "act on one component SERVICE/COMPONENT (component-level lock)")
	}
}

// BindMany adds the target flags with a repeatable --component (a comma
// list too) and --exclude, for the commands that plan (docs/plan.md#scope);
// locks says whether the command takes the lock they narrow to.
func (t *TargetFlags) BindMany(cmd *cobra.Command, locks bool) {
	t.Bind(cmd, false)
	service, component := "act on one service", "act on component SERVICE/COMPONENT; repeat it or give a comma list for several"
	if locks {
		service += " (service-level lock)"
		component = "act on component SERVICE/COMPONENT (component-level lock); repeat it or give a comma list for several (their service's lock, or the stack's)"
	}
	cmd.Flags().StringVar(&t.Service, "service", "", service)
	cmd.Flags().StringSliceVar(&t.Components, "component", nil, component)
	cmd.Flags().StringSliceVar(&t.Exclude, "exclude", nil, "leave SERVICE or SERVICE/COMPONENT out of the plan; repeatable")
}

// ValidateFlags checks what can be checked before deployer.yaml is read.
func (t *TargetFlags) ValidateFlags() error {
	if t.Env == "" {
		// The flag wins; DEPLOYER_ENVIRONMENT is the default, as
		// DEPLOYER_STACK is the stack's (docs/configuration.md#environment-variables-and-flags).
		t.Env = os.Getenv(EnvironmentVar)
		t.EnvFromVar = t.Env != ""
	}
	if t.Env == "" {
		return &exitcode.UsageError{Msg: "--environment (-e) is required (or set " + EnvironmentVar + ")"}
	}
	if len(t.Components) > 0 || len(t.Exclude) > 0 {
		if err := t.validateMany(); err != nil {
			return err
		}
	}
	if t.Service != "" && t.Component != "" {
		return &exitcode.UsageError{Msg: "use either --service or --component, not both"}
	}
	if t.Component != "" && !strings.Contains(t.Component, "/") {
		return &exitcode.UsageError{Msg: fmt.Sprintf("--component %q: want SERVICE/COMPONENT, e.g. user-service/api", t.Component)}
	}
	return nil
}

// validateMany checks --component and --exclude as lists and keeps one
// --component in Component.
func (t *TargetFlags) validateMany() error {
	comps := slices.Compact(slices.Sorted(slices.Values(t.Components)))
	for _, c := range comps {
		if !strings.Contains(c, "/") {
			return &exitcode.UsageError{Msg: fmt.Sprintf("--component %q: want SERVICE/COMPONENT, e.g. user-service/api", c)}
		}
	}
	t.Component = ""
	if len(comps) == 1 {
		t.Component, comps = comps[0], nil
	}
	t.Components = comps
	if t.Service != "" && len(comps) > 0 {
		return &exitcode.UsageError{Msg: "use either --service or --component, not both"}
	}
	for _, e := range t.Exclude {
		if e == "" {
			return &exitcode.UsageError{Msg: "--exclude needs SERVICE or SERVICE/COMPONENT"}
		}
	}
	return nil
}

// Resolve fills the stack from cfg and checks every name (docs/configuration.md#names) before
// any backend is touched.
func (t *TargetFlags) Resolve(cfg *config.Config) (deploy.Target, error) {
	out := deploy.Target{Stack: t.Stack, Env: t.Env, Service: t.Service}
	if out.Stack == "" && cfg != nil {
		out.Stack = cfg.Stack
	}
	if out.Stack == "" {
		return out, &exitcode.UsageError{Msg: "--stack (-s) is required when deployer.yaml has no stack:"}
	}
	if t.Component != "" {
		out.Service, out.Component, _ = strings.Cut(t.Component, "/")
	}
	out.Components, out.Exclude = strings.Join(t.Components, ","), strings.Join(t.Exclude, ",")
	if err := config.ValidateName("environment", out.Env); err != nil && t.EnvFromVar {
		return out, t.envVarError(err)
	}
	if err := out.Validate(); err != nil {
		return out, &exitcode.UsageError{Msg: err.Error()}
	}
	return out, nil
}

// resolveWithConfig is resolve plus the environment check against
// deployer.yaml, for commands that plan: an unknown environment is a usage
// error found before any backend is opened. It does not resolve the
// environment: the use case does that once (docs/design.md#the-main-job).
func (t *TargetFlags) resolveWithConfig(cfg *config.Config) (deploy.Target, error) {
	out, err := t.Resolve(cfg)
	if err != nil {
		return out, err
	}
	if err := cfg.CheckEnvironment(out.Env); err != nil {
		if t.EnvFromVar {
			return out, t.envVarError(err)
		}
		return out, &exitcode.UsageError{Msg: err.Error()}
	}
	return out, nil
}

// envVarError is err about an environment that came from
// DEPLOYER_ENVIRONMENT, naming the variable: the user did not type it.
func (t *TargetFlags) envVarError(err error) error {
	return &exitcode.UsageError{Msg: fmt.Sprintf("%s: %v (set it to an environment of deployer.yaml, or pass -e ENV)", EnvironmentVar, err)}
}

// Load reads deployer.yaml through a command's Config func and resolves the
// target in it; with planned, an environment deployer.yaml does not declare is
// a usage error too (resolveWithConfig, for the commands that plan).
func (t *TargetFlags) Load(loadConfig func() (*config.Config, error), planned bool) (*config.Config, deploy.Target, error) {
	cfg, err := loadConfig()
	if err != nil {
		return nil, deploy.Target{}, err
	}
	resolve := t.Resolve
	if planned {
		resolve = t.resolveWithConfig
	}
	tgt, err := resolve(cfg)
	return cfg, tgt, err
}

// OptionalConfig loads deployer.yaml when present; commands that work from
// flags alone (state locks, history, ...) then need --stack.
func OptionalConfig(f *Factory) (*config.Config, error) {
	cfg, err := f.Config()
	if err == nil {
		return cfg, nil
	}
	if f.ConfigPath == "" && errors.Is(err, config.ErrNoConfig) {
		c := config.Default()
		if err := config.ApplyEnv(c, f.Getenv, ConfigOptions()...); err != nil {
			return nil, err
		}
		return c, nil
	}
	return nil, err
}

// ProjectConfig is OptionalConfig for commands that read or break what a
// project holds (state locks, state show, history, unlock): without a
// deployer.yaml they need backends named by DEPLOYER_BACKEND_STATE or
// DEPLOYER_BACKEND_LOCK, else they fail, rather than answer about an empty
// .deployer/ of the current directory (docs/design.md#read-only-commands).
func ProjectConfig(f *Factory, cmd string) (*config.Config, error) {
	cfg, err := OptionalConfig(f)
	if err != nil || cfg.Path != "" {
		return cfg, err
	}
	if f.Getenv("DEPLOYER_BACKEND_STATE") != "" || f.Getenv("DEPLOYER_BACKEND_LOCK") != "" {
		return cfg, nil
	}
	dir, _ := os.Getwd()
	return nil, fmt.Errorf("no deployer.yaml in %s: run deployer %s in the directory of your deployer.yaml, "+
		"pass --config FILE, or name the backends with DEPLOYER_BACKEND_LOCK / DEPLOYER_BACKEND_STATE", dir, cmd)
}

func ValidateName(what, v string) error {
	if err := config.ValidateName(what, v); err != nil {
		return &exitcode.UsageError{Msg: err.Error()}
	}
	return nil
}

// BindLockTimeout adds --lock-timeout, how long a command that takes a lock
// waits for a held one (docs/locking.md), bound to d; 0 fails at once with
// exit code 3.
func BindLockTimeout(cmd *cobra.Command, d *time.Duration) {
	cmd.Flags().DurationVar(d, "lock-timeout", 0, "wait up to DUR for a held lock (0: fail at once)")
}

// WithTarget adapts run, which needs deployer.yaml and the resolved target,
// into a command's run: it loads both first (TargetFlags.load, with
// loadConfig), so a command's run starts at its own work.
func WithTarget[O any](t *TargetFlags, loadConfig func() (*config.Config, error), run func(context.Context, O, *config.Config, deploy.Target) error) func(context.Context, O) error {
	return func(ctx context.Context, opts O) error {
		cfg, tgt, err := t.Load(loadConfig, false)
		if err != nil {
			return err
		}
		return run(ctx, opts, cfg, tgt)
	}
}
