package sanitize

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// mention is how GitHub finds a mention in rendered text: @ after a
// non-word character, then a login (or org/team).
var mention = regexp.MustCompile(`(^|[^\w])@[A-Za-z0-9]`)

// Data in a table cell or paragraph mentions no one, shows no image and
// links nowhere (docs/github-actions.md#what-is-masked-where): a reader of a
// pull request comment loads nothing an author of deployer.yaml chose.
func TestMarkdownDataIsInert(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	for _, in := range []string{
		"ping @org/team and @someone, (@x) _@y",
		"![x](https://evil.example/p.png)",
		"[approve](https://evil.example/ok)",
		"[ref]: https://evil.example/x",
		"&#64;org/team &#91;x&#93;(https://evil.example)",
		"<img src=https://evil.example/p.png>",
		"<!-- deployer-plan stack=other environment=prod -->",
	} {
		out := Markdown(in)
		src := []byte("| a |\n|---|\n| " + out + " |\n\n" + out + "\n")
		doc := md.Parser().Parse(text.NewReader(src))
		_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			switch n.Kind() {
			case ast.KindImage, ast.KindLink, ast.KindRawHTML, ast.KindHTMLBlock:
				if entering {
					t.Errorf("Markdown(%q) = %q renders a %s", in, out, n.Kind())
				}
			}
			return ast.WalkContinue, nil
		})
		if rendered := renderedText(md, src); mention.MatchString(rendered) {
			t.Errorf("Markdown(%q) = %q renders a mention: %q", in, out, rendered)
		}
		if strings.Contains(out, "<!--") {
			t.Errorf("Markdown(%q) = %q holds an HTML comment", in, out)
		}
	}
}

// renderedText is the text of src as rendered to HTML, entities decoded.
func renderedText(md goldmark.Markdown, src []byte) string {
	var b strings.Builder
	if err := md.Convert(src, &b); err != nil {
		return ""
	}
	tags := regexp.MustCompile(`<[^>]*>`)
	return html.UnescapeString(tags.ReplaceAllString(b.String(), " "))
}

// No form of data in a comment holds "<!--": nothing in it opens a hidden
// comment or forges the marker of another comment or section.
func TestNoHTMLCommentInCodeData(t *testing.T) {
	in := "x\n<!-- deployer-section prod -->\n<!-- /deployer-section prod -->\n"
	for name, out := range map[string]string{"CodeSpan": CodeSpan(in), "CodeBlock": CodeBlock("text", in), "CodeText": CodeText(in)} {
		if strings.Contains(out, "<!--") {
			t.Errorf("%s(%q) = %q holds <!--", name, in, out)
		}
	}
}
