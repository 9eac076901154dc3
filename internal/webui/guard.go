package webui

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// MinTokenLen is the shortest token accepted (characters): a token guards a
// view of every lock and state of the project (docs/ui.md#security-model).
const MinTokenLen = 16

// CookieName is the cookie a ?token= request is answered with, so the token
// leaves the address bar after the first page.
const CookieName = "deployer_ui_token"

// CSP is the Content-Security-Policy of every answer: our own styles and
// script only, no inline script, no framing, no form posts.
const CSP = "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// IsLoopback reports whether host (an address's host part, no port) names
// only this machine: "localhost" or a loopback IP. "" (every interface) is
// not.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckAddr refuses an address the UI must not listen on as asked: one that
// does not parse, or a non-loopback one without a token of at least
// MinTokenLen characters.
func CheckAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: want HOST:PORT, e.g. 127.0.0.1:8787", addr)
	}
	if token != "" && len(token) < MinTokenLen {
		return fmt.Errorf("the token is %d characters long: use at least %d (e.g. openssl rand -hex 16)", len(token), MinTokenLen)
	}
	if !IsLoopback(host) && token == "" {
		return fmt.Errorf("--addr %s listens beyond this machine: set a token with --token or DEPLOYER_UI_TOKEN (e.g. DEPLOYER_UI_TOKEN=$(openssl rand -hex 16)), or bind 127.0.0.1 and use an SSH port-forward (docs/ui.md)", addr)
	}
	return nil
}

// allowedHosts are the Host headers a request may carry (DNS-rebinding
// defence): the bound address, and for a loopback bind localhost,
// 127.0.0.1 and [::1] on the bound port; extra are host names or
// host:port given with --allow-host (a bare name is allowed on the bound
// port).
func allowedHosts(bound net.Addr, extra []string) (map[string]bool, error) {
	host, port, err := net.SplitHostPort(bound.String())
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	add := func(h string) { out[strings.ToLower(net.JoinHostPort(h, port))] = true }
	ip := net.ParseIP(host)
	switch {
	case ip != nil && ip.IsLoopback():
		add("localhost")
		add("127.0.0.1")
		add("::1")
	case ip != nil && ip.IsUnspecified():
		// Every interface: only the names the operator allows.
	default:
		add(host)
	}
	for _, h := range extra {
		if _, _, err := net.SplitHostPort(h); err == nil {
			out[strings.ToLower(h)] = true
		} else {
			add(h)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--addr listens on every interface: name the host browsers will use with --allow-host NAME (the Host header is checked against it)")
	}
	return out, nil
}

// guard wraps next with the checks of docs/ui.md#security-model, in order:
// the security headers on every answer; GET and HEAD only (405); the Host
// header (421); the token when one is set (401), taken from
// Authorization: Bearer, the cookie, or a ?token= that is answered with the
// cookie and a redirect to the same page without it.
func guard(next http.Handler, hosts map[string]bool, token string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "deployer ui is read-only: only GET and HEAD are served", http.StatusMethodNotAllowed)
			return
		}
		if !hosts[strings.ToLower(r.Host)] {
			http.Error(w, "Host header not served here (DNS-rebinding defence): open the address deployer ui printed, or add the name with --allow-host", http.StatusMisdirectedRequest)
			return
		}
		if token == "" {
			next.ServeHTTP(w, r)
			return
		}
		if q := r.URL.Query(); q.Has("token") {
			if !tokenOK(q.Get("token"), token) {
				http.Error(w, "wrong token", http.StatusUnauthorized)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: CookieName, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			q.Del("token")
			// One leading slash: "//host" would send the browser elsewhere.
			u := url.URL{Path: "/" + strings.TrimLeft(r.URL.Path, "/"), RawQuery: q.Encode()}
			http.Redirect(w, r, u.String(), http.StatusSeeOther)
			return
		}
		if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && tokenOK(bearer, token) {
			next.ServeHTTP(w, r)
			return
		}
		if c, err := r.Cookie(CookieName); err == nil && tokenOK(c.Value, token) {
			next.ServeHTTP(w, r)
			return
		}
		h.Set("WWW-Authenticate", `Bearer realm="deployer ui"`)
		http.Error(w, "this deployer ui needs its token: open the address with ?token=TOKEN once, or send Authorization: Bearer TOKEN", http.StatusUnauthorized)
	})
}

// tokenOK compares in constant time (for equal lengths; the length of the
// token is not a secret worth hiding).
func tokenOK(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
