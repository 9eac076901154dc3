package webui

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestCheckAddrNeedsATokenBeyondLoopback(t *testing.T) {
	const tok = "0123456789abcdef0123"
	tests := []struct {
		addr, token, wantErr string
	}{
		{addr: "127.0.0.1:8787"},
		{addr: "localhost:0"},
		{addr: "[::1]:8787"},
		{addr: "0.0.0.0:8787", wantErr: "set a token with --token or DEPLOYER_UI_TOKEN"},
		{addr: ":8787", wantErr: "set a token with --token or DEPLOYER_UI_TOKEN"},
		{addr: "10.1.2.3:8787", wantErr: "listens beyond this machine"},
		{addr: "10.1.2.3:8787", token: tok},
		{addr: "10.1.2.3:8787", token: "short", wantErr: "use at least 16"},
		{addr: "8787", wantErr: "want HOST:PORT"},
	}
	for _, tt := range tests {
		err := CheckAddr(tt.addr, tt.token)
		if tt.wantErr == "" && err != nil {
			t.Errorf("CheckAddr(%q, %q) = %v, want nil", tt.addr, tt.token, err)
		}
		if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("CheckAddr(%q, %q) = %v, want an error saying %q", tt.addr, tt.token, err, tt.wantErr)
		}
	}
}

// guarded is the real handler of a Server bound at bound, with no lock
// backend (the locks page lists none).
func guarded(t *testing.T, bound net.Addr, token string, allow ...string) http.Handler {
	t.Helper()
	srv, err := New(Config{Token: token, AllowHosts: allow, Poll: time.Second}, bound)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func do(h http.Handler, method, host, target string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	r.Host = host
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestGuardOnLoopback(t *testing.T) {
	h := guarded(t, loopback, "")
	for _, host := range []string{"127.0.0.1:8787", "localhost:8787", "LOCALHOST:8787", "[::1]:8787"} {
		if w := do(h, "GET", host, "/locks"); w.Code != http.StatusOK {
			t.Errorf("GET /locks with Host %s = %d, want 200: %s", host, w.Code, w.Body)
		}
	}
	// DNS rebinding: a page of evil.example whose name now resolves to
	// 127.0.0.1 sends its own Host.
	for _, host := range []string{"evil.example:8787", "localhost:9999", "127.0.0.1", ""} {
		if w := do(h, "GET", host, "/locks"); w.Code != http.StatusMisdirectedRequest || !strings.Contains(w.Body.String(), "DNS-rebinding") {
			t.Errorf("GET /locks with Host %q = %d %q, want 421 naming the DNS-rebinding defence", host, w.Code, w.Body)
		}
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
		w := do(h, m, "localhost:8787", "/locks")
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("%s /locks = %d Allow %q, want 405 Allow \"GET, HEAD\"", m, w.Code, w.Header().Get("Allow"))
		}
	}
	if w := do(h, "HEAD", "localhost:8787", "/locks"); w.Code != http.StatusOK {
		t.Errorf("HEAD /locks = %d, want 200", w.Code)
	}
	// Every answer, refusals included, carries the headers.
	for _, w := range []*httptest.ResponseRecorder{do(h, "GET", "localhost:8787", "/locks"), do(h, "POST", "localhost:8787", "/"),
		do(h, "GET", "evil.example", "/"), do(h, "GET", "localhost:8787", "/assets/ui.css")} {
		want := map[string]string{"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
		for k, v := range want {
			if got := w.Header().Get(k); got != v {
				t.Errorf("answer %d: %s = %q, want %q", w.Code, k, got, v)
			}
		}
	}
	if !strings.Contains(CSP, "script-src 'self'") || strings.Contains(CSP, "unsafe-inline") {
		t.Errorf("CSP %q allows inline script", CSP)
	}
}

func TestGuardTokenOnANonLoopbackBind(t *testing.T) {
	const tok = "s3cr3t-t0ken-0123456789"
	bound := &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 8787}
	h := guarded(t, bound, tok)
	host := "10.1.2.3:8787"
	if w := do(h, "GET", host, "/locks"); w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "?token=") {
		t.Errorf("GET without the token = %d %q, want 401 saying how to pass it", w.Code, w.Body)
	}
	if w := do(h, "GET", host, "/locks", "Authorization", "Bearer wrong-token-0123456789"); w.Code != http.StatusUnauthorized {
		t.Errorf("GET with a wrong bearer = %d, want 401", w.Code)
	}
	if w := do(h, "GET", host, "/locks", "Authorization", "Bearer "+tok); w.Code != http.StatusOK {
		t.Errorf("GET with the bearer = %d, want 200", w.Code)
	}
	if w := do(h, "GET", host, "/locks?token=nope"); w.Code != http.StatusUnauthorized {
		t.Errorf("GET ?token=nope = %d, want 401", w.Code)
	}
	// ?token= once: a cookie and a redirect to the page without it.
	w := do(h, "GET", host, "/stacks?token="+tok)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/stacks" {
		t.Fatalf("GET ?token= = %d Location %q, want 303 to /stacks", w.Code, w.Header().Get("Location"))
	}
	if w := do(h, "GET", host, "//evil.example/x?token="+tok); w.Header().Get("Location") != "/evil.example/x" {
		t.Errorf("GET //evil.example/x?token= redirects to %q, want a path of this server", w.Header().Get("Location"))
	}
	cookies := w.Result().Cookies()
	if len(cookies) != 1 || cookies[0].Name != CookieName || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookies %+v, want one HttpOnly SameSite=Strict %s", cookies, CookieName)
	}
	if w := do(h, "GET", host, "/locks", "Cookie", cookies[0].String()); w.Code != http.StatusOK {
		t.Errorf("GET with the cookie = %d, want 200", w.Code)
	}
	if w := do(h, "GET", host, "/locks", "Cookie", CookieName+"=forged"); w.Code != http.StatusUnauthorized {
		t.Errorf("GET with a forged cookie = %d, want 401", w.Code)
	}
	// The Host check comes first: the token does not open a foreign Host.
	if w := do(h, "GET", "evil.example:8787", "/locks", "Authorization", "Bearer "+tok); w.Code != http.StatusMisdirectedRequest {
		t.Errorf("foreign Host with the token = %d, want 421", w.Code)
	}
}

func TestGuardWildcardBindNeedsAllowHost(t *testing.T) {
	bound := &net.TCPAddr{IP: net.IPv4zero, Port: 8787}
	if _, err := New(Config{Token: "0123456789abcdef", Poll: time.Second}, bound); err == nil || !strings.Contains(err.Error(), "--allow-host") {
		t.Fatalf("New on 0.0.0.0 without --allow-host = %v, want an error naming --allow-host", err)
	}
	h := guarded(t, bound, "0123456789abcdef", "ops.example.com", "localhost:18787")
	for host, want := range map[string]int{"ops.example.com:8787": 401, "localhost:18787": 401, "10.0.0.9:8787": 421, "ops.example.com:1": 421} {
		if w := do(h, "GET", host, "/locks"); w.Code != want {
			t.Errorf("Host %s = %d, want %d", host, w.Code, want)
		}
	}
}
