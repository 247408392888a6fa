package main

import (
	"fmt"
	"os"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/spf13/cobra"

	"wtd/engine/record"
	"wtd/luabind"
)

func newParamsCmd(env Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "params PLAYBOOK",
		Short: "List a playbook's parameters: their names, types and defaults",
		Long: `Params lists the parameters a playbook declares with params{}: each name,
its type as the default gives it (number, boolean, string, list of numbers,
list of strings) and the default. These are what wtd run -p name=value and a
schedule's params: can set. The playbook runs only up to its params{} call,
without starting or contacting anything.`,
		Example: `  wtd params playbooks/cache_sweep.lua
  wtd params playbooks/cache_sweep.lua --json | jq -r '.[].name'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			src, err := os.ReadFile(path)
			if err != nil {
				return usageErr("read playbook: %v", err)
			}
			params, declared, err := luabind.Params(cmd.Context(), path, string(src))
			if err != nil {
				return usageErr("%v", err)
			}
			if params == nil {
				params = []luabind.Param{}
			}
			if asJSON {
				return printJSON(env.Stdout, params)
			}
			if !declared {
				fmt.Fprintf(env.Stdout, "%s declares no parameters (it does not call params{} before it starts its work)\n", termLine(path))
				return nil
			}
			t := table.NewWriter()
			t.SetOutputMirror(termWriter{env.Stdout})
			t.SetStyle(table.StyleLight)
			t.AppendHeader(table.Row{"name", "type", "default"})
			for _, p := range params {
				t.AppendRow(table.Row{termLine(p.Name), p.Type, termLine(record.ParamValue(p.Default))})
			}
			t.Render()
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of {name, type, default}")
	return cmd
}
