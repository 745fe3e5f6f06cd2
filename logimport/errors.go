package logimport

import "errors"

// The errors libpcp_import returns, as sentinel values: every error from an
// Importer wraps one of them (test with errors.Is), with the metric,
// instance or time it concerns.
var (
	ErrDupMetricName  = errors.New("metric name already defined")                         // PMI_ERR_DUPMETRICNAME
	ErrDupMetricID    = errors.New("metric PMID already defined")                         // PMI_ERR_DUPMETRICID
	ErrDupInstName    = errors.New("external instance name already defined")              // PMI_ERR_DUPINSTNAME
	ErrDupInstID      = errors.New("internal instance identifier already defined")        // PMI_ERR_DUPINSTID
	ErrInstNotNull    = errors.New("null instance expected for a singular metric")        // PMI_ERR_INSTNOTNULL
	ErrInstNull       = errors.New("null instance not allowed for a non-singular metric") // PMI_ERR_INSTNULL
	ErrBadHandle      = errors.New("illegal handle")                                      // PMI_ERR_BADHANDLE
	ErrDupValue       = errors.New("value already assigned for this metric-instance")     // PMI_ERR_DUPVALUE
	ErrBadType        = errors.New("illegal metric type")                                 // PMI_ERR_BADTYPE
	ErrBadSem         = errors.New("illegal metric semantics")                            // PMI_ERR_BADSEM
	ErrNoData         = errors.New("no data to output")                                   // PMI_ERR_NODATA
	ErrBadMetricName  = errors.New("illegal metric name")                                 // PMI_ERR_BADMETRICNAME
	ErrBadTimestamp   = errors.New("timestamp before the previous one")                   // PMI_ERR_BADTIMESTAMP
	ErrBadTextType    = errors.New("illegal text type")                                   // PMI_ERR_BADTEXTTYPE
	ErrBadTextClass   = errors.New("illegal text class")                                  // PMI_ERR_BADTEXTCLASS
	ErrBadTextID      = errors.New("illegal text identifier")                             // PMI_ERR_BADTEXTID
	ErrEmptyText      = errors.New("text is empty")                                       // PMI_ERR_EMPTYTEXTCONTENT
	ErrDupText        = errors.New("help text already exists")                            // PMI_ERR_DUPTEXT
	ErrBadLabelType   = errors.New("illegal label type")                                  // PMI_ERR_BADLABELTYPE
	ErrBadLabelID     = errors.New("illegal label identifier")                            // PMI_ERR_BADLABELID
	ErrBadLabelInst   = errors.New("illegal label instance")                              // PMI_ERR_BADLABELINSTANCE
	ErrEmptyLabelName = errors.New("label name is empty")                                 // PMI_ERR_EMPTYLABELNAME
	ErrEmptyLabelVal  = errors.New("label value is empty")                                // PMI_ERR_EMPTYLABELVALUE
	ErrBadVersion     = errors.New("illegal archive version")                             // PMI_ERR_BADVERSION
	ErrAddLabel       = errors.New("error adding label")                                  // PMI_ERR_ADDLABELERROR
	ErrUnknownMetric  = errors.New("unknown metric name")                                 // PM_ERR_NAME
	ErrUnknownInst    = errors.New("unknown or illegal instance identifier")              // PM_ERR_INST
	ErrUnknownInDom   = errors.New("unknown or illegal instance domain")                  // PM_ERR_INDOM
	ErrConv           = errors.New("value does not parse for its type")                   // PM_ERR_CONV
	ErrEnded          = errors.New("archive already ended")                               // PM_ERR_NOCONTEXT
)

// pmErrConv is PM_ERR_CONV, which libpcp_import leaves in a value set whose
// first value did not parse.
const pmErrConv = -12362
