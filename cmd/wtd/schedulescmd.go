package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
	"wtd/engine/store"

	"github.com/spf13/cobra"

	"wtd/daemon"
	"wtd/schedule"
	"wtd/web"
)

func newSchedulesCmd(env Env) *cobra.Command {
	var api, config string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "schedules [--api URL | --config wtd.yaml]",
		Short: "List the daemon's schedules and windows: next fires, last runs, skips, window state",
		Long: `Schedules prints the table GET /api/v1/schedules serves: each schedule with its
cron spec, next fire, last run and skips, and each window with its next
opening and state. It asks the running daemon at --api, else at the listen
address of --config; when no daemon answers there, it prints what the config
file says (next fire times) with the history the config's results database
holds (last runs, skips, window transitions).`,
		Example: `  wtd schedules --config /etc/wtd/wtd.yaml
  wtd schedules --api http://127.0.0.1:7070 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if config == "" {
				config = env.Getenv("WTD_CONFIG")
			}
			if api == "" && config == "" {
				return usageErr("give --api URL or --config FILE (or $WTD_CONFIG)")
			}
			reply, err := schedulesReply(cmd.Context(), env, api, config)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(reply)
			}
			web.PrintSchedules(env.Stdout, reply)
			return nil
		},
	}
	cmd.Flags().StringVar(&api, "api", "", "the daemon's API, e.g. http://127.0.0.1:7070")
	cmd.Flags().StringVar(&config, "config", "", "the daemon's config file (default $WTD_CONFIG)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the JSON the API serves")
	return cmd
}

// schedulesReply asks the daemon, or reads the config when no daemon
// answers at its address.
func schedulesReply(ctx context.Context, env Env, api, config string) (web.SchedulesReply, error) {
	var cfg *schedule.Config
	load := func() error {
		c, err := daemon.LoadConfig(ctx, config)
		if err != nil {
			return usageErr("%v", err)
		}
		cfg = &c
		return nil
	}
	if api == "" {
		if err := load(); err != nil {
			return web.SchedulesReply{}, err
		}
		api = "http://" + cfg.Listen
	}
	reply, err := fetchSchedules(ctx, api)
	if err == nil {
		return reply, nil
	}
	if config == "" {
		return reply, &exitError{code: exitFailed, err: err}
	}
	if cfg == nil { // --api given: the config is read only now
		if err := load(); err != nil {
			return web.SchedulesReply{}, err
		}
	}
	reply = web.Views(schedule.Describe(*cfg, time.Now(), 5))
	withHist, herr := historyOf(ctx, env, cfg, reply)
	if herr != nil {
		fmt.Fprintf(env.Stderr, "wtd: %v: showing the config alone (no history: %v)\n", err, herr)
		return reply, nil
	}
	fmt.Fprintf(env.Stderr, "wtd: %v: showing the config and the history in the results database\n", err)
	return withHist, nil
}

// historyOf adds the history the config's results database holds to
// reply, when the database exists (it is not created for this).
func historyOf(ctx context.Context, env Env, cfg *schedule.Config, reply web.SchedulesReply) (web.SchedulesReply, error) {
	path, err := dbPath(cfg.DB, env.Getenv)
	if err != nil {
		return reply, err
	}
	if _, err := os.Stat(path); err != nil {
		return reply, fmt.Errorf("no results database at %s", path)
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		return reply, err
	}
	defer st.Close(ctx)
	return web.WithHistory(ctx, st, reply)
}

func fetchSchedules(ctx context.Context, api string) (web.SchedulesReply, error) {
	var reply web.SchedulesReply
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	url := strings.TrimRight(api, "/") + "/api/v1/schedules"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return reply, fmt.Errorf("ask the daemon: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply, fmt.Errorf("no daemon answers at %s: %w", api, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		json.NewDecoder(resp.Body).Decode(&e)
		return reply, fmt.Errorf("GET %s: %s: %s", url, resp.Status, e.Error)
	}
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
		return reply, fmt.Errorf("GET %s: decode: %w", url, err)
	}
	return reply, nil
}
