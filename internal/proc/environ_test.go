package proc

import (
	"slices"
	"testing"
)

// The rule of what children get: no key material or CI token for anyone,
// Pulumi's passphrase for the Pulumi CLI only, git an allow-list.
func TestEnvironRule(t *testing.T) {
	env := []string{"PATH=/bin", "HOME=/h", "DEPLOYER_SECRETS_PASSPHRASE=a", "DEPLOYER_SECRETS_NEW_PASSPHRASE_FILE=/f",
		"PULUMI_CONFIG_PASSPHRASE=p", "GITHUB_TOKEN=t", "GH_TOKEN=g", "ACTIONS_ID_TOKEN_REQUEST_TOKEN=i", "ACTIONS_RESULTS_TOKEN=r", "ACTIONS_RESULTS_URL=u",
		"AWS_SECRET_ACCESS_KEY=s", "GIT_DIR=.git", "LC_ALL=C", "MINE=1", "DEPLOYER_SECRETS_PASSPHRASEX=a"}
	for _, tc := range []struct {
		c    Child
		want []string
	}{
		{UserCommand, []string{"PATH=/bin", "HOME=/h", "ACTIONS_RESULTS_URL=u", "AWS_SECRET_ACCESS_KEY=s", "GIT_DIR=.git", "LC_ALL=C", "MINE=1"}},
		{PulumiCLI, []string{"PATH=/bin", "HOME=/h", "PULUMI_CONFIG_PASSPHRASE=p", "ACTIONS_RESULTS_URL=u", "AWS_SECRET_ACCESS_KEY=s", "GIT_DIR=.git", "LC_ALL=C", "MINE=1"}},
		{Git, []string{"PATH=/bin", "HOME=/h", "GIT_DIR=.git", "LC_ALL=C"}},
	} {
		if got := Environ(tc.c, env); !slices.Equal(got, tc.want) {
			t.Errorf("Environ(%d) = %v, want %v", tc.c, got, tc.want)
		}
	}
}
