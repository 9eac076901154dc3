package ghactions

import (
	"strings"
	"testing"
)

// merge keeps every other job's section byte for byte, replaces only its
// own, orders sections by key, survives keys that would end an HTML
// comment, and cuts its own section to the room the others leave.
func TestSectionMergeKeepsOtherSections(t *testing.T) {
	sec := func(key, text string) SectionComment {
		return SectionComment{Marker: "<!-- m -->", Head: "<!-- m -->\nhead\n", Foot: "foot\n", Key: key,
			Render: func(room int) string {
				if runeLen(text) > room {
					return text[:room]
				}
				return text
			}}
	}
	body := sec("b", "plan of b\n").merge("")
	body = sec("a--x>", "plan of a\n").merge(body)
	body = sec("c", "plan of c\n").merge(body)
	body = sec("b", "new plan of b\n").merge(body)
	want := "<!-- m -->\nhead\n" +
		"<!-- deployer-section a-%2Dx%3E -->\nplan of a\n<!-- /deployer-section a-%2Dx%3E -->\n" +
		"<!-- deployer-section b -->\nnew plan of b\n<!-- /deployer-section b -->\n" +
		"<!-- deployer-section c -->\nplan of c\n<!-- /deployer-section c -->\n" +
		"foot\n"
	if body != want {
		t.Fatalf("merged body:\n%s\nwant:\n%s", body, want)
	}
	if got := parseSections(body); len(got) != 3 || got["a--x>"] != "plan of a\n" {
		t.Errorf("sections: %q", got)
	}
	huge := sec("d", strings.Repeat("x", 2*MaxCommentChars)).merge(body)
	if n := runeLen(huge); n != MaxCommentChars || !strings.Contains(huge, "plan of a\n") || !strings.HasSuffix(huge, "foot\n") {
		t.Errorf("a huge section should be cut to fill the comment exactly (%d characters) and keep the others", n)
	}
}
