package options

import (
	"os"
	"strings"
)

// Layout of boost::program_options' help output, which mongod prints.
const (
	usageWidth  = 80
	usageColumn = 40
)

// Usage returns the --help text: every supported option, grouped in
// mongod's sections, with boost's "arg (=default)" notation.
func Usage() string {
	var b strings.Builder
	b.WriteString("Options:\n")
	for _, section := range []string{secGeneral, secRepl, secStorage, secWT} {
		b.WriteString("\n" + section + ":\n")
		for i := range specs {
			if specs[i].section == section && specs[i].cli != "" && !specs[i].hidden {
				writeUsageLine(&b, &specs[i])
			}
		}
	}
	return b.String()
}

// usageName is the left column: "-f [ --config ] arg", "--port arg",
// "--syncdelay arg (=60)", "-v [ --verbose ] [=arg(=v)]".
func usageName(s *spec) string {
	name := "--" + s.cli
	if s.short != 0 {
		name = "-" + string(s.short) + " [ --" + s.cli + " ]"
	}
	switch {
	case s.key == keyVerbose:
		return name + " [=arg(=" + verboseImplicit + ")]"
	case s.kind == kSwitch:
		return name
	case s.def != "":
		return name + " arg (=" + s.def + ")"
	}
	return name + " arg"
}

// writeUsageLine writes one option with its description wrapped in the
// right column.
func writeUsageLine(b *strings.Builder, s *spec) {
	left := "  " + usageName(s)
	if len(left) >= usageColumn-1 {
		b.WriteString(left + "\n")
		left = ""
	}
	pad := strings.Repeat(" ", usageColumn-len(left))
	for i, line := range wrap(s.help, usageWidth-usageColumn) {
		if i > 0 {
			left, pad = "", strings.Repeat(" ", usageColumn)
		}
		b.WriteString(left + pad + line + "\n")
	}
}

// wrap splits text into lines of at most width characters at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}

// CheckDBPath reports mongod's startup error when the data directory does
// not exist (NonExistentPath, logged by initAndListen; exit code 100).
func (o *Options) CheckDBPath() error {
	st, err := os.Stat(o.DBPath)
	if err == nil && st.IsDir() {
		return nil
	}
	return startupError(29, "NonExistentPath", "Data directory "+o.DBPath+
		" not found. Create the missing directory or specify another path using "+
		"(1) the --dbpath command line option, or (2) by adding the 'storage.dbPath' "+
		"option in the configuration file.")
}
