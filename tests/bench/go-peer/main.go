// The Go peer of the query service: GET /v1/networks, /v1/history and /v1/history/hash on the
// project's own schema, answering byte for byte as the project does, for scripts/bench to
// measure beside it. net/http and database/sql with go-sql-driver/mysql (Debian's packages),
// one process using every core (GOMAXPROCS), prepared statements (the project's own, ported in
// statements.go), served behind nginx with upstream keep-alive (tests/bench/peer/nginx.conf.in).
//
// Usage: connector-go-peer [--listen HOST:PORT | --listen /path/to.sock]
// Environment (the flag wins over PEER_LISTEN):
//
//	PEER_LISTEN          127.0.0.1:PORT or a unix socket path (default 127.0.0.1:3000)
//	PEER_DB_SOCKET       MariaDB unix socket (else PEER_DB_HOST, PEER_DB_PORT: 127.0.0.1:3306)
//	PEER_DB_NAME, PEER_DB_USER, PEER_DB_PASSWORD   (connector, connector, connector-dev)
//	PEER_DB_CONNECTIONS  connections in the pool (default 16 per core, as the Node peer's total)
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

const (
	jsonType         = "application/json; charset=utf-8"
	historyCache     = "public, max-age=2"
	finalRecordCache = "public, max-age=3600"
	referenceCache   = "public, max-age=60"
)

type server struct {
	db  *sql.DB
	ref atomic.Pointer[reference]
}

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

// nginx's $request_id (X-Request-Id), or one made here.
func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); requestIDPattern.MatchString(id) {
		return id
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// A 200 with a strong ETag of its body, or a 304 when If-None-Match names that tag.
func send(w http.ResponseWriter, r *http.Request, cacheControl string, body []byte) {
	etag := strongEtag(body)
	h := w.Header()
	h["Cache-Control"] = []string{cacheControl}
	h["Etag"] = []string{etag}
	if inm := r.Header.Get("If-None-Match"); inm != "" && ifNoneMatchMatches(inm, etag) {
		// net/http drops a Content-Type set under its canonical name from a 304; the project
		// and the Node peer send it (RFC 9110 allows it), so it goes under its lower-case name,
		// which nginx reads case-insensitively and sends on in its own spelling.
		h["content-type"] = []string{jsonType}
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Type"] = []string{jsonType}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// The one error body: {"error":{"code","message"[,"param"],"request_id"}}.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var apiErr *apiError
	if !errors.As(err, &apiErr) {
		var dbErr dbError
		if errors.As(err, &dbErr) {
			w.Header()["Retry-After"] = []string{"1"}
			apiErr = &apiError{503, "unavailable", "The service cannot reach its database; retry shortly", ""}
		} else {
			apiErr = &apiError{500, "internal", "Internal error", ""}
		}
		log.Printf("peer: %s %s: %v", r.Method, r.URL.RequestURI(), err)
	}
	type errorJSON struct {
		Code      string `json:"code"`
		Message   string `json:"message"`
		Param     string `json:"param,omitempty"`
		RequestID string `json:"request_id"`
	}
	body, _ := marshal(struct {
		Error errorJSON `json:"error"`
	}{errorJSON{apiErr.code, apiErr.message, apiErr.param, requestID(r)}})
	h := w.Header()
	h["Content-Type"] = []string{jsonType}
	h["Cache-Control"] = []string{"no-store"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(apiErr.status)
	_, _ = w.Write(body)
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.fail(w, r, &apiError{404, "not_found", "No such endpoint", ""})
		return
	}
	var body []byte
	var params map[string]string
	var err error
	cacheControl := historyCache
	switch r.URL.Path {
	case "/v1/networks":
		if _, err = knownParams(r.URL.RawQuery, nil); err == nil {
			body, cacheControl = s.ref.Load().networksBody, referenceCache
		}
	case "/v1/history":
		var answer *historyJSON
		if params, err = knownParams(r.URL.RawQuery, historyParams); err == nil {
			if answer, err = s.history(params); err == nil {
				body, err = marshal(answer)
			}
		}
	case "/v1/history/hash":
		var answer *recordJSON
		if params, err = knownParams(r.URL.RawQuery, hashParams); err == nil {
			if answer, err = s.historyByHash(params); err == nil {
				// Confirmed and Error are final: the record will not change again.
				if answer.Status == "Confirmed" || answer.Status == "Error" {
					cacheControl = finalRecordCache
				}
				body, err = marshal(answer)
			}
		}
	default:
		err = &apiError{404, "not_found", "No such endpoint", ""}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	send(w, r, cacheControl, body)
}

func env(name, fallback string) string {
	if value, ok := os.LookupEnv(name); ok {
		return value
	}
	return fallback
}

func openDatabase() (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User = env("PEER_DB_USER", "connector")
	cfg.Passwd = env("PEER_DB_PASSWORD", "connector-dev")
	cfg.DBName = env("PEER_DB_NAME", "connector")
	cfg.Collation = "utf8mb4_general_ci"
	if socket := os.Getenv("PEER_DB_SOCKET"); socket != "" {
		cfg.Net, cfg.Addr = "unix", socket
	} else {
		cfg.Net = "tcp"
		cfg.Addr = net.JoinHostPort(env("PEER_DB_HOST", "127.0.0.1"), env("PEER_DB_PORT", "3306"))
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	connections, _ := strconv.Atoi(os.Getenv("PEER_DB_CONNECTIONS"))
	if connections <= 0 {
		connections = 16 * runtime.NumCPU()
	}
	db.SetMaxOpenConns(connections)
	db.SetMaxIdleConns(connections)
	return db, nil
}

func main() {
	listen := flag.String("listen", env("PEER_LISTEN", "127.0.0.1:3000"),
		"127.0.0.1:PORT or a unix socket path")
	flag.Parse()
	runtime.GOMAXPROCS(runtime.NumCPU())
	db, err := openDatabase()
	if err != nil {
		log.Fatalf("peer: %v", err)
	}
	s := &server{db: db}
	ref, err := loadReference(db)
	if err == nil {
		s.ref.Store(ref)
		err = prepareStatements(db)
	}
	if err != nil {
		log.Fatalf("peer: %v", err)
	}
	// Reloaded in the background; a failed reload keeps the last data.
	go func() {
		for range time.Tick(time.Second) {
			if ref, err := loadReference(db); err == nil {
				s.ref.Store(ref)
			} else {
				log.Printf("peer: reference reload failed: %v", err)
			}
		}
	}()

	network := "tcp"
	if strings.Contains(*listen, "/") {
		network = "unix"
		_ = os.Remove(*listen)
	}
	listener, err := net.Listen(network, *listen)
	if err != nil {
		log.Fatalf("peer: %v", err)
	}
	// nginx keeps its connections to us open (upstream keepalive): close idle ones after nginx.
	httpServer := &http.Server{Handler: s, IdleTimeout: 75 * time.Second}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = httpServer.Shutdown(ctx)
	}()
	log.Printf("peer: 1 process, GOMAXPROCS %d, %d database connections, on %s",
		runtime.GOMAXPROCS(0), db.Stats().MaxOpenConnections, *listen)
	if err := httpServer.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("peer: %v", err)
	}
	db.Close()
}
