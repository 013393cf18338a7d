package linearizability

import "fmt"

var fmtSscanf = fmt.Sscanf
