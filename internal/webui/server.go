package webui

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy/stateops"
	"github.com/deployer-dev/deployer/internal/sanitize"
	"github.com/deployer-dev/deployer/internal/stacks"
)

//go:embed assets
var assets embed.FS

// DefaultAddr is where `deployer ui` listens without --addr: this machine
// only.
const DefaultAddr = "127.0.0.1:8787"

// MaxViewers bounds the live (server-sent events) connections at once; one
// more is answered 503.
const MaxViewers = 64

// Config is what the UI reads through and how it is guarded. The read
// functions are the CLI's use cases bound to the configured backends.
type Config struct {
	// Token, when set, is required of every request (docs/ui.md#security-model).
	Token string
	// AllowHosts are extra Host header values accepted (--allow-host).
	AllowHosts []string
	// Poll is the interval of the lock poller (> 0).
	Poll time.Duration
	// Ticker makes the poller's ticks (nil: time.NewTicker).
	Ticker Ticker
	// Now is the clock of the snapshots (nil: time.Now).
	Now func() time.Time
	// Locks are the lock backends listed on the locks page.
	Locks []LockSource
	// Stacks discovers the repository's stacks (the `deployer stacks` code).
	Stacks func() (*stacks.Set, error)
	// State and History are the use cases behind `state show` and
	// `history` for one stack/environment (secrets left sealed); State
	// reads the history snapshot of serial when it is above 0 (state show
	// --serial).
	State   func(ctx context.Context, stack, env string, serial int64) (*stateops.ShowStateResult, error)
	History func(ctx context.Context, stack, env string) (*stateops.HistoryResult, error)
	// Mask hides every known secret value (the session's Masker); nil
	// masks nothing.
	Mask func(string) string
	// RequestTimeout bounds the backend reads of one page (default 20s).
	RequestTimeout time.Duration
}

// Server is the UI's HTTP handler for one bound address.
type Server struct {
	cfg     Config
	poller  *Poller
	tmpl    *template.Template
	handler http.Handler
	viewers chan struct{}
}

var pageTemplates = template.Must(template.New("").Funcs(template.FuncMap{
	"lower": strings.ToLower,
	"prev":  func(n int64) int64 { return n - 1 },
}).ParseFS(assets, "assets/*.html"))

// New returns the Server of cfg for a listener bound at bound. Errors: the
// Host check cannot be set up (a wildcard bind without --allow-host).
func New(cfg Config, bound net.Addr) (*Server, error) {
	hosts, err := allowedHosts(bound, cfg.AllowHosts)
	if err != nil {
		return nil, err
	}
	if cfg.Poll <= 0 {
		return nil, fmt.Errorf("--poll %s: want a positive interval such as 1s", cfg.Poll)
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 20 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, poller: NewPoller(cfg.Locks, cfg.Poll, cfg.Ticker, cfg.Now), tmpl: pageTemplates,
		viewers: make(chan struct{}, MaxViewers)}
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/locks", http.StatusSeeOther) })
	mux.HandleFunc("GET /locks", s.locksPage)
	mux.HandleFunc("GET /events/locks", s.locksEvents)
	mux.HandleFunc("GET /stacks", s.stacksPage)
	mux.HandleFunc("GET /stacks/{stack}", s.stackPage)
	mux.HandleFunc("GET /stacks/{stack}/{env}", s.envPage)
	mux.HandleFunc("GET /stacks/{stack}/{env}/{serial}", s.recordPage)
	s.handler = guard(mux, hosts, cfg.Token)
	return s, nil
}

// Poller is the Server's lock poller (tests count its work).
func (s *Server) Poller() *Poller { return s.poller }

// Run polls the lock backends for the live viewers until ctx ends.
func (s *Server) Run(ctx context.Context) { s.poller.Run(ctx) }

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// text is s made safe to show: every known secret masked, control
// characters escaped; the template then escapes it for HTML.
func (s *Server) text(v string) string { return sanitize.Masked{Mask: s.cfg.Mask}.Line(v) }

// lines is text keeping line breaks (an error's stderr lines), shown
// with white-space: pre-wrap.
func (s *Server) lines(v string) string { return sanitize.Masked{Mask: s.cfg.Mask}.Text(v) }

// page is what every page template gets.
type page struct {
	Title string
	Nav   string
	Body  any
}

func (s *Server) render(w http.ResponseWriter, status int, name string, p page) {
	var buf bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&buf, name, p); err != nil {
		http.Error(w, "rendering "+name+": "+s.text(err.Error()), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func (s *Server) fail(w http.ResponseWriter, status int, nav string, err error) {
	s.render(w, status, "error.html", page{Title: "Error", Nav: nav, Body: s.text(err.Error())})
}

func (s *Server) locksPage(w http.ResponseWriter, r *http.Request) {
	snap := s.poller.Current(r.Context())
	s.render(w, http.StatusOK, "locks.html", page{Title: "Locks", Nav: "locks", Body: s.locksView(snap)})
}

// RefreshPolls is how many polls a live page goes at most without an
// event: its ages are redrawn that often when nothing else changes.
const RefreshPolls = 15

// locksEvents streams the locks table as server-sent events: an event
// "locks", its data the table's HTML, after each poll that changed what
// the page shows, and after RefreshPolls polls without one
// (docs/ui.md#live-updates).
func (s *Server) locksEvents(w http.ResponseWriter, r *http.Request) {
	select {
	case s.viewers <- struct{}{}:
		defer func() { <-s.viewers }()
	default:
		http.Error(w, fmt.Sprintf("too many live viewers (%d): reload later", MaxViewers), http.StatusServiceUnavailable)
		return
	}
	rc := http.NewResponseController(w)
	ch, cancel := s.poller.Subscribe()
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	// The comment tells a client it is subscribed: the next poll reaches it.
	if _, err := fmt.Fprint(w, ": subscribed\n\n"); err != nil || rc.Flush() != nil {
		return
	}
	var (
		sent     [32]byte
		sentSeq  uint64
		sentOnce bool
	)
	for {
		select {
		case <-r.Context().Done():
			return
		case snap := <-ch:
			if sentOnce && snap.Digest == sent && snap.Seq-sentSeq < RefreshPolls {
				continue
			}
			sent, sentSeq, sentOnce = snap.Digest, snap.Seq, true
			var buf bytes.Buffer
			if err := s.tmpl.ExecuteTemplate(&buf, "locktable", s.locksView(snap)); err != nil {
				return
			}
			if err := writeEvent(w, "locks", snap.Seq, buf.String()); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

// writeEvent writes one server-sent event; each line of data gets its own
// "data:" field.
func writeEvent(w http.ResponseWriter, event string, id uint64, data string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "event: %s\nid: %d\n", event, id)
	for line := range strings.SplitSeq(strings.ReplaceAll(data, "\r", ""), "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, err := fmt.Fprint(w, b.String())
	return err
}

func (s *Server) stacksPage(w http.ResponseWriter, r *http.Request) {
	set, err := s.cfg.Stacks()
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "stacks", err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	g := s.layoutGraph(set, s.outcomes(ctx, set))
	s.render(w, http.StatusOK, "stacks.html", page{Title: "Stacks", Nav: "stacks", Body: g})
}

// stackView is a stack's page: its environments, what it reads and who
// reads it.
type stackView struct {
	Name, Dir            string
	Envs                 []string
	Producers, Consumers []string
	Refs                 []string
}

func (s *Server) stackPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("stack")
	if err := config.ValidateName("stack", name); err != nil {
		s.fail(w, http.StatusBadRequest, "stacks", err)
		return
	}
	set, err := s.cfg.Stacks()
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "stacks", err)
		return
	}
	st := set.Get(name)
	if st == nil {
		s.fail(w, http.StatusNotFound, "stacks", fmt.Errorf("no stack %s under %s (see deployer stacks)", name, set.Root))
		return
	}
	v := stackView{Name: s.text(st.Name), Dir: s.text(st.Dir)}
	for _, e := range sortedKeys(st.Config.Environments) {
		v.Envs = append(v.Envs, s.text(e))
	}
	for _, p := range set.Producers(name) {
		v.Producers = append(v.Producers, s.text(p))
	}
	for _, c := range set.Consumers(name) {
		v.Consumers = append(v.Consumers, s.text(c))
	}
	for _, ref := range st.Refs {
		v.Refs = append(v.Refs, s.text(refText(ref)))
	}
	s.render(w, http.StatusOK, "stack.html", page{Title: "Stack " + v.Name, Nav: "stacks", Body: v})
}

func refText(r stacks.Ref) string {
	t := r.Component + " reads " + r.Stack
	if r.Env != "" {
		t += " (" + r.Env + ")"
	}
	if r.External {
		t += " (external)"
	}
	return t
}

func (s *Server) envPage(w http.ResponseWriter, r *http.Request) {
	stack, env := r.PathValue("stack"), r.PathValue("env")
	for _, n := range []struct{ what, v string }{{"stack", stack}, {"environment", env}} {
		if err := config.ValidateName(n.what, n.v); err != nil {
			s.fail(w, http.StatusBadRequest, "stacks", err)
			return
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	v := envView{Stack: s.text(stack), Env: s.text(env)}
	res, err := s.cfg.State(ctx, stack, env, 0)
	if err != nil {
		v.StateErr = s.text(err.Error())
	} else {
		s.fillState(&v, res)
	}
	hist, err := s.cfg.History(ctx, stack, env)
	switch {
	case err != nil:
		v.HistoryErr = s.text(err.Error())
	default:
		if hist.StateErr != nil {
			v.HistoryErr = s.text(hist.StateErr.Error())
		}
		for _, e := range hist.Entries {
			v.History = append(v.History, s.historyRow(e))
		}
	}
	status := http.StatusOK
	if v.StateErr != "" && v.HistoryErr != "" && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		status = http.StatusGatewayTimeout
	}
	s.render(w, status, "env.html", page{Title: v.Stack + "/" + v.Env, Nav: "stacks", Body: v})
}
