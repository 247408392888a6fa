package fleet

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"wtd/engine/store"
)

// DefaultDatabase is the results store's database when none is named.
const DefaultDatabase = "wtd"

// DefaultTimeout bounds connecting to the results store and each of its
// writes when Config.Timeout is 0.
const DefaultTimeout = 10 * time.Second

// Config names the central results store.
type Config struct {
	// URI is a MongoDB connection string: mongodb:// or mongodb+srv://,
	// any hosts, with its options (TLS, replicaSet, authSource, ...).
	URI string
	// Database is where wtd keeps its collections ("" means "wtd").
	Database string
	// TokenFile, when set, holds the password of the URI's user (which
	// then carries no password itself).
	TokenFile string
	// Timeout bounds connecting and each write; 0 means DefaultTimeout.
	Timeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.Database == "" {
		c.Database = DefaultDatabase
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}

// Dest is the store in words, without password: "URI (database D)".
func (c Config) Dest() string {
	c = c.withDefaults()
	return fmt.Sprintf("%s (database %s)", store.RedactURI(c.URI), c.Database)
}

// CheckURI checks a results URI: a MongoDB connection string the driver
// accepts. Unlike an experiment target it may name any hosts: the results
// store is where wtd writes, not what it tunes. Its errors never quote
// the password.
func CheckURI(uri string) error {
	_, err := clientOptions(Config{URI: uri}, true)
	return err
}

// Check checks the whole config as connecting would, without
// connecting: the URI (CheckURI), and the token file with the URI's user.
func (c Config) Check() error {
	_, err := clientOptions(c, true)
	return err
}

// clientOptions are the driver options of the results store. To check
// only, a mongodb+srv:// URI is read as mongodb:// (the driver would look
// its SRV record up in DNS).
func clientOptions(c Config, check bool) (*options.ClientOptions, error) {
	c = c.withDefaults()
	scheme, _, ok := strings.Cut(c.URI, "://")
	if !ok {
		return nil, errors.New(`results URI: want "mongodb://HOST[:PORT],..." or "mongodb+srv://HOST"`)
	}
	if !strings.EqualFold(scheme, "mongodb") && !strings.EqualFold(scheme, "mongodb+srv") {
		// Not quoted: a password in it would not be masked.
		return nil, fmt.Errorf(`results URI: scheme %q: want "mongodb://HOST[:PORT],..." or "mongodb+srv://HOST"`, scheme)
	}
	uri := c.URI
	if check && strings.EqualFold(scheme, "mongodb+srv") {
		uri = "mongodb" + uri[len(scheme):]
	}
	opts := options.Client().ApplyURI(uri).
		SetConnectTimeout(c.Timeout).
		SetServerSelectionTimeout(c.Timeout).
		SetTimeout(c.Timeout).
		SetAppName("wtd results")
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("results URI %s: %s", store.RedactURI(c.URI), store.RedactURI(err.Error()))
	}
	if c.TokenFile != "" {
		if opts.Auth == nil || opts.Auth.Username == "" {
			return nil, fmt.Errorf("results token_file %s: the results URI names no user whose password it holds", c.TokenFile)
		}
		if opts.Auth.PasswordSet {
			return nil, errors.New("results URI: it carries a password and token_file gives one too: keep one")
		}
		b, err := os.ReadFile(c.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("results token_file: %w", err)
		}
		pw := strings.TrimSpace(string(b))
		if pw == "" {
			return nil, fmt.Errorf("results token_file %s is empty", c.TokenFile)
		}
		cred := *opts.Auth
		cred.Password, cred.PasswordSet = pw, true
		opts.SetAuth(cred)
	}
	return opts, nil
}
