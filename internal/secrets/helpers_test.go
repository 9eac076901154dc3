package secrets_test

import (
	"maps"
	"slices"

	"github.com/deployer-dev/deployer/internal/statestore"
)

func sortedAddrs(st *statestore.State) []string { return slices.Sorted(maps.Keys(st.Resources)) }
