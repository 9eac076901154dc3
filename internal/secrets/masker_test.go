package secrets_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
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

func TestMaskerHidesASecretThatContainsAnotherWholeInAnyOrder(t *testing.T) {
	for _, order := range [][]string{{"prod", "prod-9f8e7d6c"}, {"prod-9f8e7d6c", "prod"}} {
		m := secrets.NewMasker()
		var gh bytes.Buffer
		m.AnnounceTo(&gh)
		m.Add(order...)
		for in, want := range map[string]string{
			"tok=prod-9f8e7d6c":            "tok=***",
			"name=prod tok=prod-9f8e7d6c!": "name=*** tok=***!",
			"xprod-9f8e7d6cprod":           "x***",
		} {
			if got := m.Mask(in); got != want {
				t.Errorf("order %q: Mask(%q) = %q, want %q", order, in, got, want)
			}
		}
		if !strings.Contains(gh.String(), "::add-mask::prod-9f8e7d6c\n") || !strings.Contains(gh.String(), "::add-mask::prod\n") {
			t.Errorf("order %q: both values should be announced:\n%s", order, gh.String())
		}
	}
	// Overlapping values: every byte of both is hidden.
	m := secrets.NewMasker()
	m.Add("abcdef", "xyzabc")
	if got := m.Mask("1 xyzabcdef 2"); got != "1 *** 2" {
		t.Errorf("overlap: %q", got)
	}
	// A carriage return splits a value as the runner splits a log line.
	m.Add("first-part\rsecond-part")
	if got := m.Mask("a second-part b first-part"); got != "a *** b ***" {
		t.Errorf("\\r pieces: %q", got)
	}
}

// A secret number is masked in every text it can be printed as: JSON
// (1e+21, 1.5e-7), %v and strconv's 'g' (1.5e-07), 'f' (plain decimal),
// 'e' and 'E' forms; a json.Number as written too.
func TestNumberSecretsAreMaskedInEveryForm(t *testing.T) {
	for _, v := range []any{1e21, 1.5e-7, 2.5e30, float64(87654321), float32(3.25e-9), json.Number("1e21")} {
		m := secrets.NewMasker()
		m.Add(secrets.Strings(v)...)
		f, _ := strconv.ParseFloat(fmt.Sprint(v), 64)
		b, _ := json.Marshal(v)
		forms := []string{string(b), fmt.Sprint(v), fmt.Sprintf("%v", v), strconv.FormatFloat(f, 'g', -1, 64),
			strconv.FormatFloat(f, 'f', -1, 64), strconv.FormatFloat(f, 'e', -1, 64), strconv.FormatFloat(f, 'E', -1, 64)}
		if x, ok := v.(float32); ok {
			forms = append(forms, strconv.FormatFloat(float64(x), 'g', -1, 32), strconv.FormatFloat(float64(x), 'f', -1, 32))
		}
		for _, form := range forms {
			if got := m.Mask("n=" + form + ";"); got != "n=***;" {
				t.Errorf("%v printed as %s: masked %q", v, form, got)
			}
		}
	}
}

// The runner unescapes %25, %0A and %0D in a command's data: a secret
// holding them is announced escaped, so the runner masks the secret as
// printed, not its unescaped form.
func TestAnnouncedMasksAreEscapedForTheRunner(t *testing.T) {
	var out bytes.Buffer
	m := secrets.NewMasker()
	m.AnnounceTo(&out)
	m.Add("pa%25ss%0Aword")
	if got, want := out.String(), "::add-mask::pa%2525ss%250Aword\n"; got != want {
		t.Errorf("announced %q, want %q", got, want)
	}
}

// WithEncodings masks a secret reversed, in hex and in base64 whatever its
// alignment inside a longer encoded text.
func TestMaskerWithEncodingsMasksComputedForms(t *testing.T) {
	m := secrets.NewMasker()
	m.Add("Policy-Secret-7070")
	e := m.WithEncodings()
	for _, s := range []string{"Policy-Secret-7070", "0707-terceS-yciloP", hex.EncodeToString([]byte("Policy-Secret-7070"))} {
		if got := e.Mask("x " + s + " y"); got != "x *** y" {
			t.Errorf("Mask(%q) = %q", s, got)
		}
	}
	for _, prefix := range []string{"", "a", "ab", "abc", "postgres://app:"} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
			text := enc.EncodeToString([]byte(prefix + "Policy-Secret-7070@db/app"))
			if got := e.Mask(text); !strings.Contains(got, secrets.Hidden) {
				t.Errorf("base64 of %q: %q not masked", prefix+"Policy-Secret-7070@db/app", text)
			}
		}
	}
	if got := e.Mask("nothing secret here"); got != "nothing secret here" {
		t.Errorf("Mask changed an ordinary text: %q", got)
	}
}
