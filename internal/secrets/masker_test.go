package secrets_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/secrets"
)

func TestMaskerHidesValuesInEveryForm(t *testing.T) {
	m := secrets.NewMasker()
	m.Add("hunter2", "ab", `quo"te`, "line-one\nline-two")
	for in, want := range map[string]string{
		"pw=hunter2 again hunter2": "pw=*** again ***",
		"ab is too short to mask":  "ab is too short to mask",
		`{"pw":"quo\"te"}`:         `{"pw":"***"}`,
		"only line-two leaked":     "only *** leaked",
	} {
		if got := m.Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
	if !m.Contains("postgres://u:hunter2@h") || m.Contains("nothing here") || m.Contains("ab") {
		t.Errorf("Contains")
	}
	var out bytes.Buffer
	w := m.Writer(&out)
	fmt.Fprintln(w, "[app/db] my password is hunter2")
	if out.String() != "[app/db] my password is ***\n" {
		t.Errorf("Writer: %q", out.String())
	}
}

func TestMaskerAnnouncesEachValueOnceUnderGitHubActions(t *testing.T) {
	m := secrets.NewMasker()
	m.Add("early-secret")
	var gh bytes.Buffer
	m.AnnounceTo(&gh)
	m.Add("late-secret", "late-secret", "early-secret")
	want := "::add-mask::early-secret\n::add-mask::late-secret\n"
	if gh.String() != want {
		t.Errorf("announcements:\n%s\nwant:\n%s", gh.String(), want)
	}
	if strings.Count(gh.String(), "late-secret") != 1 {
		t.Errorf("a value is announced once")
	}
}
