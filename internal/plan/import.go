package plan

import (
	"fmt"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// ImportError: a component's import: block names an instance other than
// the one its state entry holds (docs/operations.md#import), so the import
// would adopt a second instance under one address. Recorded is the id the
// entry was imported with; "" when deployer created it.
// ByCommand is set when the id comes from `deployer import ADDR ID`, not
// from an import: block.
type ImportError struct {
	Address, ID, Recorded string
	ByCommand             bool
}

func (e *ImportError) Error() string {
	held := "created by deployer, not imported"
	if e.Recorded != "" {
		held = fmt.Sprintf("imported with id %q", e.Recorded)
	}
	if e.ByCommand {
		return fmt.Sprintf("%s is already in the state (%s): deployer import %s %s would adopt another instance under it; "+
			"forget the instance in the state first (deployer state rm %s) to adopt the other one", e.Address, held, e.Address, e.ID, e.Address)
	}
	return fmt.Sprintf("%s is already in the state (%s) and its import: names id %q: remove import: from it, "+
		"or forget the instance in the state first (deployer state rm %s) to adopt the other one", e.Address, held, e.ID, e.Address)
}

// importStep makes s, the step of c against its state entry old, an
// Import of c's import id when old is nil (a Create otherwise). With old
// in the state the import is done: s stays as diffed when old was
// imported with the same id, and is an *ImportError otherwise.
func importStep(s *Step, c *config.ResolvedComponent, old *statestore.Resource) error {
	switch {
	case c.ImportID == "":
		return nil
	case old == nil:
		s.Action, s.ImportID = Import, c.ImportID
		return nil
	case old.Lifecycle.ImportedID != c.ImportID:
		return &ImportError{Address: c.Address, ID: c.ImportID, Recorded: old.Lifecycle.ImportedID}
	}
	return nil
}
