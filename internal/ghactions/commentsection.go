package ghactions

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/google/go-github/v88/github"
)

// SectionComment is one section of a comment that several jobs write
// together (a matrix run's plan comment,
// docs/many-stacks.md#pull-request-comment-of-a-matrix-run): the comment is
// found by Marker, starts with Head and ends with Foot, and holds one
// section per Key between the sub-markers sectionOpen(Key) and
// sectionClose(Key), in Key order.
type SectionComment struct {
	Marker     string
	Head, Foot string // Head holds Marker
	Key        string
	// Render returns the section's text in at most room characters.
	Render func(room int) string
	// Settle is how long after its write a job reads the comment again to
	// see its section was not overwritten by another job's write of the
	// same moment (a random time between Settle and twice Settle); 0 is
	// DefaultSettle.
	Settle time.Duration
}

// DefaultSettle is SectionComment.Settle's default.
const DefaultSettle = time.Second

// sectionTries bounds how often a job writes its section again after it
// found it overwritten.
const sectionTries = 6

// UpsertSection writes s's section into the comment of pr that holds
// s.Marker, keeping every other section as it is, or creates the comment.
// GitHub has no conditional update, so it reads, merges and writes, then
// reads the comment back (at once and after s.Settle) and writes again
// when its section is missing: two jobs that read before either wrote
// both see their section in the end, unless a write lands after the
// other's last read-back. Two jobs that both create the comment keep the
// older one: the newer is merged into it and deleted. Errors are
// *CommentError, or an error after sectionTries overwritten writes.
func UpsertSection(ctx context.Context, hc *http.Client, pr PullRequest, s SectionComment) (commentURL string, created bool, err error) {
	c, err := newClient(hc, pr)
	if err != nil {
		return "", false, err
	}
	for try := 0; try < sectionTries; try++ {
		found, err := findComments(ctx, c, pr, s.Marker)
		if err != nil {
			return "", false, err
		}
		var cm *github.IssueComment
		if len(found) == 0 {
			if cm, err = createSection(ctx, c, pr, s); err != nil {
				return "", false, err
			}
			created = true
		} else if cm, err = writeSection(ctx, c, pr, s, found[0]); err != nil {
			return "", false, err
		}
		ok, err := s.readBack(ctx, c, pr, cm.GetID())
		if err != nil {
			return "", false, err
		}
		if ok {
			return cm.GetHTMLURL(), created, nil
		}
	}
	return "", false, fmt.Errorf("the section of %s was overwritten by other jobs' writes %d times: not written", s.Key, sectionTries)
}

// createSection posts the comment with s's section alone; when another
// job created the comment at the same time, the older comment stays: s's
// section goes into it and the new one is deleted.
func createSection(ctx context.Context, c *github.Client, pr PullRequest, s SectionComment) (*github.IssueComment, error) {
	cm, resp, err := c.Issues.CreateComment(ctx, pr.Owner, pr.Repo, pr.Number, &github.IssueComment{Body: github.Ptr(s.merge(""))})
	if err != nil {
		return nil, commentErr("create comment", resp, err)
	}
	found, err := findComments(ctx, c, pr, s.Marker)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 || found[0].GetID() == cm.GetID() {
		return cm, nil
	}
	if resp, err := c.Issues.DeleteComment(ctx, pr.Owner, pr.Repo, cm.GetID()); err != nil {
		return nil, commentErr("delete comment", resp, err)
	}
	return writeSection(ctx, c, pr, s, found[0])
}

// writeSection merges s's section into cm's body and updates cm (nothing
// when its section is already as s renders it).
func writeSection(ctx context.Context, c *github.Client, pr PullRequest, s SectionComment, cm *github.IssueComment) (*github.IssueComment, error) {
	body := s.merge(cm.GetBody())
	if body == cm.GetBody() {
		return cm, nil
	}
	out, resp, err := c.Issues.EditComment(ctx, pr.Owner, pr.Repo, cm.GetID(), &github.IssueComment{Body: github.Ptr(body)})
	if err != nil {
		return nil, commentErr("update comment", resp, err)
	}
	return out, nil
}

// readBack reads comment id at once and again after the settle time, and
// reports whether it still holds s's section as s renders it (false when
// the comment is gone or another job's write dropped or replaced the
// section).
func (s SectionComment) readBack(ctx context.Context, c *github.Client, pr PullRequest, id int64) (bool, error) {
	settle := s.Settle
	if settle <= 0 {
		settle = DefaultSettle
	}
	for i := 0; i < 2; i++ {
		if i > 0 {
			wait := settle + rand.N(settle)
			select {
			case <-ctx.Done():
				return false, &CommentError{Op: "read comment", Err: ctx.Err()}
			case <-time.After(wait):
			}
		}
		cm, resp, err := c.Issues.GetComment(ctx, pr.Owner, pr.Repo, id)
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return false, nil
		}
		if err != nil {
			return false, commentErr("read comment", resp, err)
		}
		// Another job of the run writes the same head and foot: only a
		// missing or older section of s changes the merge.
		if s.merge(cm.GetBody()) != cm.GetBody() {
			return false, nil
		}
	}
	return true, nil
}

// merge returns body with s's section in place (added or replaced), the
// other sections as body holds them, s's head and foot, and s's section
// cut to fit in MaxCommentChars.
func (s SectionComment) merge(body string) string {
	sections := parseSections(body)
	delete(sections, s.Key)
	keys := make([]string, 0, len(sections)+1)
	for k := range sections {
		keys = append(keys, k)
	}
	keys = append(keys, s.Key)
	sort.Strings(keys)
	others := 0
	for k, text := range sections {
		others += runeLen(sectionOpen(k)) + runeLen(text) + runeLen(sectionClose(k))
	}
	frame := runeLen(sectionOpen(s.Key)) + runeLen(sectionClose(s.Key))
	sections[s.Key] = s.Render(MaxCommentChars - runeLen(s.Head) - runeLen(s.Foot) - others - frame)
	var b strings.Builder
	b.WriteString(s.Head)
	for _, k := range keys {
		b.WriteString(sectionOpen(k) + sections[k] + sectionClose(k))
	}
	b.WriteString(s.Foot)
	return b.String()
}

// sectionOpen and sectionClose are the sub-markers around the section of
// key (markerValue keeps them one HTML comment each).
func sectionOpen(key string) string  { return "<!-- deployer-section " + markerValue(key) + " -->\n" }
func sectionClose(key string) string { return "<!-- /deployer-section " + markerValue(key) + " -->\n" }

// parseSections returns the sections of a comment body by key (markerValue
// form): the text between each pair of sub-markers.
func parseSections(body string) map[string]string {
	const open, end = "<!-- deployer-section ", " -->\n"
	out := map[string]string{}
	for {
		i := strings.Index(body, open)
		if i < 0 {
			return out
		}
		rest := body[i+len(open):]
		j := strings.Index(rest, end)
		if j < 0 {
			return out
		}
		key := rest[:j]
		text := rest[j+len(end):]
		closing := "<!-- /deployer-section " + key + end
		k := strings.Index(text, closing)
		if k < 0 {
			body = text
			continue
		}
		out[unmarkerValue(key)] = text[:k]
		body = text[k+len(closing):]
	}
}

// markerValue writes s so that it cannot end the HTML comment it is put
// in nor split on spaces; unmarkerValue reverses it.
func markerValue(s string) string {
	return strings.NewReplacer("%", "%25", " ", "%20", ">", "%3E", "--", "-%2D").Replace(s)
}

func unmarkerValue(s string) string {
	return strings.NewReplacer("%20", " ", "%3E", ">", "%2D", "-", "%25", "%").Replace(s)
}
