package pulumi

import (
	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/plan"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// An imported component (docs/operations.md#import) declares its one
// resource with Pulumi's import option and the id of the existing
// resource: `pulumi up` reads it through the provider and adopts it,
// creating nothing. A difference between the live resource and the config
// that Pulumi would follow the import with (an update in place, a
// replacement) is refused before the up by importGuard, so the up only
// ever adopts what the plan showed.

// importOf is the id step s's component is declared with as Pulumi's
// import option: an Import step's id, or the id of an import that failed
// after Pulumi adopted the resource (its entry failed, with imported_id,
// and was never applied: no deployment recorded; Pulumi's own refusal of
// a replacement left such entries before importGuard), so that Pulumi,
// holding the resource, refuses to replace it rather than replacing what
// it adopted; "" otherwise.
func importOf(s plan.Step) string {
	switch {
	case s.Action == plan.Import:
		return s.ImportID
	case s.Prior != nil && s.Prior.Status == statestore.ResourceFailed && s.Prior.Deployment == nil:
		return s.Prior.Lifecycle.ImportedID
	}
	return ""
}

// importRule is kind k's engine.Kind.Import: a kind of one resource can be
// imported (Kind.importable), one of several cannot.
func importRule(k *Kind) config.ImportRule {
	if k.importable() {
		return config.ImportRule{Supported: true}
	}
	return config.ImportRule{Why: "it is several Pulumi resources; an import adopts one resource by its id"}
}

// importable reports whether components of k can adopt an existing
// resource by its id (docs/operations.md#import): a kind of one resource,
// which then gets Pulumi's import option with that id.
func (k *Kind) importable() bool { return len(k.Tokens) == 1 && len(k.Suffixes) == 0 }
