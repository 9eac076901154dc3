package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/app"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/termui"
	"github.com/deployer-dev/deployer/internal/webui"
)

// UIOptions are the inputs of `deployer ui`.
type UIOptions struct {
	IO *termui.IOStreams
	// from argv and the environment
	Addr       string
	Token      string
	AllowHosts []string
	Poll       time.Duration
	// Config builds the UI's reads over the configured backends (bound by
	// NewCmdUI; a run test sets its own).
	Config func(ctx context.Context) (webui.Config, error)
	// Ready, when set, is called with the URL once the UI listens.
	Ready func(url string)
}

// NewCmdUI returns `deployer ui`; runF replaces runUI in tests.
func NewCmdUI(f *app.Factory, runF func(context.Context, *UIOptions) error) *cobra.Command {
	opts := &UIOptions{IO: f.IO}
	opts.Config = func(ctx context.Context) (webui.Config, error) { return app.UIConfig(ctx, f) }
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve a read-only web view of locks, stacks and history",
		Long: heredoc.Doc(`
			Serves a read-only web view over the configured backends: every lock with its holder, verdict,
			waiters and the unlock command that would break it, updated live; the stacks under the working
			directory as a dependency graph; each stack/environment's components and history. It listens on
			127.0.0.1 only unless --addr says otherwise, which needs a token (--token or DEPLOYER_UI_TOKEN,
			at least 16 characters); it answers GET and HEAD only and checks the Host header (docs/ui.md).`),
		Example: heredoc.Doc(`
			  deployer ui
			  deployer ui --addr 127.0.0.1:9000 --poll 2s
			  DEPLOYER_UI_TOKEN=$(openssl rand -hex 16) deployer ui --addr 0.0.0.0:8787 --allow-host ops.example.com`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Token == "" {
				opts.Token = f.Getenv("DEPLOYER_UI_TOKEN")
			}
			if err := webui.CheckAddr(opts.Addr, opts.Token); err != nil {
				return &exitcode.UsageError{Msg: err.Error()}
			}
			if opts.Poll < 100*time.Millisecond {
				return &exitcode.UsageError{Msg: fmt.Sprintf("--poll %s: want at least 100ms (each poll lists every lock of the backend)", opts.Poll)}
			}
			// Ctrl-C shuts the server down and the command exits 0.
			defer f.StopsOnSignal()()
			return runOr(cmd, opts, runF, runUI)
		},
	}
	cmd.Flags().StringVar(&opts.Addr, "addr", webui.DefaultAddr, "listen on HOST:PORT (beyond 127.0.0.1 it needs a token)")
	cmd.Flags().StringVar(&opts.Token, "token", "", "require this token (default: DEPLOYER_UI_TOKEN); at least 16 characters")
	cmd.Flags().StringSliceVar(&opts.AllowHosts, "allow-host", nil, "also accept this Host header (NAME or NAME:PORT), e.g. the jump host's name")
	cmd.Flags().DurationVar(&opts.Poll, "poll", time.Second, "how often the lock backend is listed while a locks page is open")
	return cmd
}

// runUI listens, prints the URL and serves until ctx ends (Ctrl-C).
func runUI(ctx context.Context, opts *UIOptions) error {
	cfg, err := opts.Config(ctx)
	if err != nil {
		return err
	}
	cfg.Token, cfg.AllowHosts, cfg.Poll = opts.Token, opts.AllowHosts, opts.Poll
	if cfg.Mask == nil {
		cfg.Mask = opts.IO.Mask
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("deployer ui cannot listen on %s: %w (pick another port with --addr)", opts.Addr, err)
	}
	defer ln.Close()
	srv, err := webui.New(cfg, ln.Addr())
	if err != nil {
		return &exitcode.UsageError{Msg: err.Error()}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go srv.Run(ctx)
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	url := "http://" + ln.Addr().String() + "/"
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && tcp.IP.IsLoopback() {
		url = fmt.Sprintf("http://localhost:%d/", tcp.Port)
	}
	shown := url
	if opts.Token != "" {
		shown += " (open it once with ?token=TOKEN)"
	}
	fmt.Fprintf(opts.IO.ErrOut, "deployer ui (read-only) on %s; Ctrl-C stops it.\n", shown)
	if opts.Ready != nil {
		opts.Ready(url)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer scancel()
	_ = hs.Shutdown(sctx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
