package scenario

import "strings"

// Format prints the scenario's canonical text: the Pins comment (each line
// after "# "), the device line, one line per operation and, when Report is
// not empty, one report line. For a scenario that Parse returned,
// Parse(name, s.Format()) is equal to s.
func (s *Scenario) Format() string {
	var b strings.Builder
	if s.Pins != "" {
		for _, line := range strings.Split(s.Pins, "\n") {
			line = strings.TrimRight(line, " \t\r\v\f")
			if line == "" {
				b.WriteString("#\n")
				continue
			}
			b.WriteString("# " + line + "\n")
		}
	}
	b.WriteString(s.Device.String() + "\n")
	for _, op := range s.Ops {
		b.WriteString(op.String() + "\n")
	}
	if len(s.Report) > 0 {
		b.WriteString("report " + strings.Join(s.Report, " ") + "\n")
	}
	return b.String()
}
