package deploy

import (
	"errors"
	"fmt"
	"maps"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/plan"
)

// ImportTarget is one `deployer import ADDR ID` (docs/operations.md#import):
// the apply of ADDR alone with its import: block saying ID.
type ImportTarget struct {
	Address string // "svc/comp", declared in deployer.yaml
	ID      string // the existing instance's id
}

// OrNil is t, or nil when it names no address (no import).
func (t ImportTarget) OrNil() *ImportTarget {
	if t.Address == "" {
		return nil
	}
	return &t
}

// withImport returns cfg with imp written as its component's import:
// block and t narrowed to that component: the apply is then the plan of
// that one import. Errors (a *TargetError): the address names no component
// of deployer.yaml, its import: names another id, or its kind cannot
// import (the fix named).
func (s *Service) withImport(cfg *config.Config, t Target, imp *ImportTarget) (*config.Config, Target, error) {
	svcName, name := config.SplitAddress(imp.Address)
	svc := cfg.Services[svcName]
	if name == "" || svc == nil || svc.Components[name] == nil {
		return nil, t, &TargetError{Msg: fmt.Sprintf("%s is not a component of deployer.yaml: declare it there (SERVICE/NAME, with the config of the instance), then import it", imp.Address)}
	}
	comp := *svc.Components[name]
	if comp.Import != nil && comp.Import.ID != imp.ID {
		return nil, t, &TargetError{Msg: fmt.Sprintf("deployer.yaml's import: of %s names id %q, not %q: change or remove it there", imp.Address, comp.Import.ID, imp.ID)}
	}
	if msg := s.importProblem(comp); msg != "" {
		return nil, t, &TargetError{Msg: imp.Address + ": " + msg}
	}
	comp.Import = &config.Import{ID: imp.ID}
	out, svcCopy := *cfg, *svc
	svcCopy.Components = maps.Clone(svc.Components)
	svcCopy.Components[name] = &comp
	out.Services = maps.Clone(cfg.Services)
	out.Services[svcName] = &svcCopy
	t.Service, t.Component, t.Components, t.Exclude = svcName, name, "", ""
	return &out, t, nil
}

// importProblem is what keeps comp from being imported, as its kind's
// engine says (engine.Kind.Import); "" when nothing does or no engine
// knows the kind (the apply then says so).
func (s *Service) importProblem(comp config.Component) string {
	for _, e := range s.d.Engines {
		for _, k := range e.Kinds() {
			if k.Name == comp.Kind {
				return k.Import.Problem(comp.Kind, e.Name(), comp.Settings)
			}
		}
	}
	return ""
}

// byImportCommand marks err's *plan.ImportError of addr as coming from
// deployer import, whose user wrote no import: block.
func byImportCommand(err error, addr string) {
	var ie *plan.ImportError
	if errors.As(err, &ie) && ie.Address == addr {
		ie.ByCommand = true
	}
}
