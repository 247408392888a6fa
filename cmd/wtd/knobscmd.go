package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"wtd/hostctl"
)

func newKnobsCmd(env Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "knobs",
		Short: "List the knobs a playbook can turn: flag, key, range, default, restart or runtime",
		Long: `Prints wtd's table of server knobs: for each, the name a playbook uses and
the mongod.start / m:restart option that carries it, mongod's command-line
flag and configuration-file key, the setParameter name or WiredTiger key,
the type, range and units, the default mongod runs with (and WiredTiger's
own where it differs), whether a change needs a restart, and the rules
between knobs. Every check of a playbook's settings uses this table.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON {
				return writeKnobsJSON(env.Stdout)
			}
			return writeKnobs(env.Stdout)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the table as JSON ({knobs, rules})")
	return cmd
}

// knobsJSON is what `wtd knobs --json` prints.
type knobsJSON struct {
	Knobs []hostctl.Knob     `json:"knobs"`
	Rules []hostctl.KnobRule `json:"rules"`
}

func writeKnobsJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(knobsJSON{Knobs: hostctl.Knobs, Rules: hostctl.KnobRules})
}

func writeKnobs(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KNOB\tOPTION\tFLAG\tKEY\tTYPE\tRANGE\tDEFAULT\tCHANGE")
	for _, k := range hostctl.Knobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.Name, k.Option, dash(flagOf(k)), dash(keyOf(k)),
			k.Type, dash(rangeOf(k)), dash(defaultOf(k)), changeOf(k))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nRules (checked when both are given):")
	for _, r := range hostctl.KnobRules {
		fmt.Fprintf(w, "  %s\n", r)
	}
	fmt.Fprintln(w, "\nValues in force (wtd knobs --json has each knob's way to read it, its runtime change and doc).")
	return nil
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func flagOf(k hostctl.Knob) string {
	if k.Flag == "" {
		return ""
	}
	return "--" + k.Flag
}

// keyOf is the key the knob has in mongod: the YAML key, then the
// setParameter name or the WiredTiger key that goes inside it.
func keyOf(k hostctl.Knob) string {
	switch {
	case k.WTKey != "" && k.Option == "engineConfig":
		return "configString: " + k.WTKey
	case k.Parameter != "" && k.ConfigKey == "":
		return "setParameter." + k.Parameter
	}
	return k.ConfigKey
}

func rangeOf(k hostctl.Knob) string {
	if k.Type == hostctl.KnobEnum {
		return strings.Join(k.Values, "|")
	}
	if k.Min == nil && k.Max == nil {
		return ""
	}
	r := ""
	if k.Min != nil {
		r = knobNumber(*k.Min)
	}
	r += ".."
	if k.Max != nil {
		r += knobNumber(*k.Max)
	}
	if k.Units != "" {
		r += " " + k.Units
	}
	return r
}

// knobNumber writes a bound as WiredTiger documents it: 10TB, 2GB.
func knobNumber(v float64) string {
	for _, u := range []struct {
		suffix string
		size   float64
	}{{"TB", 1 << 40}, {"GB", 1 << 30}} {
		if v >= u.size && v == float64(int64(v/u.size))*u.size {
			return fmt.Sprintf("%d%s", int64(v/u.size), u.suffix)
		}
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func defaultOf(k hostctl.Knob) string {
	if k.WTDefault != "" && k.WTDefault != k.Default {
		return k.Default + " (WiredTiger: " + k.WTDefault + ")"
	}
	return k.Default
}

func changeOf(k hostctl.Knob) string {
	if k.Restart {
		return "restart"
	}
	return "runtime"
}
