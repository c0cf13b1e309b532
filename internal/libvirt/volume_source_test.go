package libvirt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// trust makes source_url downloads trust srv's certificate for the test.
func trust(t *testing.T, srv *httptest.Server) {
	t.Helper()
	old := sourceTransport
	sourceTransport = srv.Client().Transport
	t.Cleanup(func() { sourceTransport = old })
}

// secrets are what must never show in a Source's name or an error.
var secrets = []string{"s3cr3t-token", "hunter2", "alice"}

func noSecrets(t *testing.T, what, s string) {
	t.Helper()
	for _, x := range secrets {
		if strings.Contains(s, x) {
			t.Errorf("%s shows %q: %s", what, x, s)
		}
	}
}

func open(t *testing.T, rawURL string) (*Source, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	src, err := OpenSource(ctx, rawURL, "")
	if err != nil {
		noSecrets(t, "the error", err.Error())
		t.Log(err)
	} else {
		noSecrets(t, "Source.Name", src.Name)
		t.Cleanup(func() { src.Body.Close() })
	}
	return src, err
}

func withCreds(srvURL, path string) string {
	return strings.Replace(srvURL, "://", "://alice:hunter2@", 1) + path + "?sig=s3cr3t-token&expires=1"
}

// TestOpenSource_redirectToHTTP: https -> http is refused (the image would travel in the
// clear while the configuration says https); http -> https and https -> https are not.
func TestOpenSource_redirectToHTTP(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "plain bytes")
	}))
	defer plain.Close()
	var tls *httptest.Server
	tls = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-http":
			http.Redirect(w, r, plain.URL+"/img?sig=s3cr3t-token", http.StatusFound)
		case "/to-https":
			http.Redirect(w, r, tls.URL+"/img?sig=s3cr3t-token", http.StatusFound)
		default:
			fmt.Fprint(w, "tls bytes")
		}
	}))
	defer tls.Close()
	trust(t, tls)

	_, err := open(t, withCreds(tls.URL, "/to-http"))
	if err == nil || !strings.Contains(err.Error(), "refused a redirect from https to http") {
		t.Fatalf("https -> http: err = %v, want a refusal", err)
	}
	if !strings.Contains(err.Error(), "?REDACTED") {
		t.Errorf("the error does not show where the query was: %v", err)
	}

	src, err := open(t, withCreds(tls.URL, "/to-https"))
	if err != nil {
		t.Fatalf("https -> https: %v", err)
	}
	if b, _ := io.ReadAll(src.Body); string(b) != "tls bytes" {
		t.Fatalf("https -> https read %q", b)
	}

	toTLS := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, tls.URL+"/img", http.StatusFound)
	}))
	defer toTLS.Close()
	if _, err := open(t, toTLS.URL+"/x"); err != nil {
		t.Fatalf("http -> https: %v", err)
	}
}

// TestOpenSource_redirectLimit: the 10th redirect is refused, as by Go's own client.
func TestOpenSource_redirectLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		_, _ = fmt.Sscanf(r.URL.Path, "/%d", &n)
		if n < 20 {
			http.Redirect(w, r, fmt.Sprintf("/%d?sig=s3cr3t-token", n+1), http.StatusFound)
			return
		}
		fmt.Fprint(w, "x")
	}))
	defer srv.Close()
	if _, err := open(t, srv.URL+"/11"); err != nil {
		t.Fatalf("9 redirects: %v", err)
	}
	if _, err := open(t, srv.URL+"/10"); err == nil || !strings.Contains(err.Error(), "stopped after 10 redirects") {
		t.Fatalf("10 redirects: err = %v", err)
	}
}

// TestOpenSource_redacted: Source.Name (logged while uploading) and every error show the
// URL without its query (tokens of signed URLs) and without user:password.
func TestOpenSource_redacted(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.NotFound(w, r)
		case "/bad-location":
			w.Header().Set("Location", "http://[::1/x?sig=s3cr3t-token")
			w.WriteHeader(http.StatusFound)
		case "/slow":
			<-r.Context().Done()
		default:
			if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "hunter2" {
				t.Errorf("the server got no credentials from the URL (%v %q)", ok, u)
			}
			if r.URL.Query().Get("sig") != "s3cr3t-token" {
				t.Errorf("the server got no query: %q", r.URL.RawQuery)
			}
			fmt.Fprint(w, "image")
		}
	}))
	defer srv.Close()
	trust(t, srv)

	src, err := open(t, withCreds(srv.URL, "/img.qcow2"))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(srv.URL, "://", "://***@", 1) + "/img.qcow2?REDACTED"; src.Name != want {
		t.Errorf("Source.Name = %q, want %q", src.Name, want)
	}
	if b, _ := io.ReadAll(src.Body); string(b) != "image" {
		t.Errorf("read %q", b)
	}

	if _, err := open(t, withCreds(srv.URL, "/missing")); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("404: err = %v", err)
	}
	if _, err := open(t, withCreds(srv.URL, "/bad-location")); err == nil {
		t.Error("a Location that does not parse was followed")
	}
	// Transport errors: the client's *url.Error quotes the whole request URL.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	if _, err := open(t, withCreds(closed.URL, "/img")); err == nil {
		t.Error("a closed server answered")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = OpenSource(ctx, withCreds(srv.URL, "/slow"), "")
	if err == nil {
		t.Fatal("a download past its deadline did not fail")
	}
	noSecrets(t, "the deadline error", err.Error())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the redacted error does not unwrap to its cause: %v", err)
	}
	// Refused before any request.
	for _, u := range []string{"ftp://alice:hunter2@host/img?sig=s3cr3t-token", "http://alice:hunter2@host/%zz?sig=s3cr3t-token"} {
		if _, err := open(t, u); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://host/img.qcow2":                         "https://host/img.qcow2",
		"https://host/img.qcow2?X-Amz-Signature=abc&x=1": "https://host/img.qcow2?REDACTED",
		"https://alice:hunter2@host:8443/a/b?t=1#frag":   "https://***@host:8443/a/b?REDACTED",
		"https://alice@host/x":                           "https://***@host/x",
		"http://host/x?":                                 "http://host/x?REDACTED",
		"file:///var/lib/img.qcow2":                      "file:///var/lib/img.qcow2",
		"http://alice:hunter2@host/%zz?sig=s3cr3t-token": "http://[a URL that does not parse, not shown]",
		"not a url at all ://\x7f":                       "[a URL that does not parse, not shown]",
		"https://[::1]:443/x?token=s3cr3t-token":         "https://[::1]:443/x?REDACTED",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	err := redactErr(fmt.Errorf(`Get "https://alice:hunter2@h/x?sig=s3cr3t-token": failed to parse Location header "http://[::1/x?sig=s3cr3t-token": bad`))
	noSecrets(t, "redactErr", err.Error())
	if !strings.Contains(err.Error(), `Get "https://***@h/x?REDACTED"`) {
		t.Errorf("redactErr = %v", err)
	}
}

func FuzzRedactURL(f *testing.F) {
	f.Add("https://alice:hunter2@host:8443/a/b?t=s3cr3t-token#frag")
	f.Add("http://alice:hunter2@host/%zz?sig=s3cr3t-token")
	f.Add("file:///x")
	f.Add("!!!?!!!?")  // found by fuzzing: faults of the check, not of RedactURL
	f.Add(" 000?0000") // (the path is escaped to %20000)
	f.Fuzz(func(t *testing.T, raw string) {
		got := RedactURL(raw)
		if i := strings.IndexByte(raw, '?'); i >= 0 {
			q := raw[i+1:]
			if j := strings.IndexByte(q, '#'); j >= 0 {
				q = q[:j]
			}
			// The marker is cut out first: a path ending like the query ("!!!?!!!?") would
			// otherwise seem to show it ("!!!?REDACTED"). Text the redacted path itself holds
			// (escaped: " 000?0000" has the path "%20000") is the path's, not the query's.
			shown := strings.ReplaceAll(got, "?REDACTED", "\x00")
			path, _, _ := strings.Cut(got, "?")
			if len(q) >= 4 && strings.Contains(shown, q) && !strings.Contains(raw[:i], q) && !strings.Contains(path, q) {
				t.Fatalf("RedactURL(%q) = %q shows the query %q", raw, got, q)
			}
		}
	})
}

// The source is downloaded as the server stores it: never with a transfer gzip that Go's
// client would undo, which would change the bytes source_checksum is over.
func TestOpenSource_identityEncoding(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Accept-Encoding"); got != "identity" {
			http.Error(w, "Accept-Encoding "+got, http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte("stored bytes"))
	}))
	defer srv.Close()
	src, err := OpenSource(context.Background(), srv.URL+"/img.gz", "")
	if err != nil {
		t.Fatal(err)
	}
	src.Body.Close()
}
