package dump

import "strconv"

// The messages pmErrStr gives for the error codes a value set can carry
// (numval < 0). Codes from -1 down to -(PM_ERR_BASE-1) are errno values,
// printed with the C library's strerror (glibc's wording, as on the Linux
// hosts that write archives); PCP's own codes start at PM_ERR_BASE. The
// tables are data, generated from pmerr -l and glibc's strerror.

// pmErrBase is PM_ERR_BASE.
const pmErrBase = 12345

// pmErrNYI is PM_ERR_NYI, the end of PCP's range.
const pmErrNYI = -pmErrBase - 8999

var pcpErrors = map[int32]string{
	-12345: "Generic error, already reported above",                         // PM_ERR_GENERIC
	-12346: "Problems parsing PMNS definitions",                             // PM_ERR_PMNS
	-12347: "PMNS not accessible",                                           // PM_ERR_NOPMNS
	-12348: "Attempt to reload the PMNS",                                    // PM_ERR_DUPPMNS
	-12349: "One-line or help text is not available",                        // PM_ERR_TEXT
	-12350: "Metric not supported by this version of monitored application", // PM_ERR_APPVERSION
	-12351: "Missing metric value(s)",                                       // PM_ERR_VALUE
	-12353: "Timeout waiting for a response from PMCD",                      // PM_ERR_TIMEOUT
	-12354: "Empty archive log file",                                        // PM_ERR_NODATA
	-12355: "PMCD reset or configuration change",                            // PM_ERR_RESET
	-12357: "Unknown metric name",                                           // PM_ERR_NAME
	-12358: "Unknown or illegal metric identifier",                          // PM_ERR_PMID
	-12359: "Unknown or illegal instance domain identifier",                 // PM_ERR_INDOM
	-12360: "Unknown or illegal instance identifier",                        // PM_ERR_INST
	-12397: "Unknown or illegal metric type",                                // PM_ERR_TYPE
	-12361: "Illegal pmUnits specification",                                 // PM_ERR_UNIT
	-12362: "Impossible value or scale conversion",                          // PM_ERR_CONV
	-12363: "Truncation in value conversion",                                // PM_ERR_TRUNC
	-12364: "Negative value in conversion to unsigned",                      // PM_ERR_SIGN
	-12365: "Explicit instance identifier(s) required",                      // PM_ERR_PROFILE
	-12366: "IPC protocol failure",                                          // PM_ERR_IPC
	-12414: "TLS protocol failure",                                          // PM_ERR_TLS
	-12368: "IPC channel closed",                                            // PM_ERR_EOF
	-12369: "Operation requires context with host source of metrics",        // PM_ERR_NOTHOST
	-12370: "End of PCP archive log",                                        // PM_ERR_EOL
	-12371: "Illegal mode specification",                                    // PM_ERR_MODE
	-12372: "Illegal label record at start of a PCP archive log file",       // PM_ERR_LABEL
	-12373: "Corrupted record in a PCP archive log",                         // PM_ERR_LOGREC
	-12375: "Missing PCP archive log file",                                  // PM_ERR_LOGFILE
	-12374: "Operation requires context with archive source of metrics",     // PM_ERR_NOTARCHIVE
	-12376: "Attempt to use an illegal context",                             // PM_ERR_NOCONTEXT
	-12377: "NULL pmInDom with non-NULL instlist",                           // PM_ERR_PROFILESPEC
	-12378: "Metric not defined in the PCP archive log",                     // PM_ERR_PMID_LOG
	-12379: "Instance domain identifier not defined in the PCP archive log", // PM_ERR_INDOM_LOG
	-12380: "Instance identifier not defined in the PCP archive log",        // PM_ERR_INST_LOG
	-12381: "Missing profile - protocol botch",                              // PM_ERR_NOPROFILE
	-12386: "No PMCD agent for domain of request",                           // PM_ERR_NOAGENT
	-12387: "No permission to perform requested operation",                  // PM_ERR_PERMISSION
	-12388: "PMCD connection limit for this host exceeded",                  // PM_ERR_CONNLIMIT
	-12389: "Try again. Information not currently available",                // PM_ERR_AGAIN
	-12390: "Already Connected",                                             // PM_ERR_ISCONN
	-12391: "Not Connected",                                                 // PM_ERR_NOTCONN
	-12392: "A non-null port name is required",                              // PM_ERR_NEEDPORT
	-12394: "Metric name is not a leaf in PMNS",                             // PM_ERR_NONLEAF
	-13394: "PMDA is not yet ready to respond to requests",                  // PM_ERR_PMDANOTREADY
	-13393: "PMDA is now responsive to requests",                            // PM_ERR_PMDAREADY
	-12442: "Internal inconsistency detected or assertion failed",           // PM_ERR_BOTCH
	-12443: "Insufficient elements in list",                                 // PM_ERR_TOOSMALL
	-12444: "Result size exceeded",                                          // PM_ERR_TOOBIG
	-12445: "QA fault injected",                                             // PM_ERR_FAULT
	-12398: "Operation not supported for multi-threaded applications",       // PM_ERR_THREAD
	-12399: "Container not found",                                           // PM_ERR_NOCONTAINER
	-12400: "Bad input to pmstore",                                          // PM_ERR_BADSTORE
	-12401: "Archives overlap in time",                                      // PM_ERR_LOGOVERLAP
	-12402: "Archives differ by host",                                       // PM_ERR_LOGHOST
	-12404: "The type of a metric has changed in an archive",                // PM_ERR_LOGCHANGETYPE
	-12405: "The semantics of a metric has changed in an archive",           // PM_ERR_LOGCHANGESEM
	-12406: "The instance domain of a metric has changed in an archive",     // PM_ERR_LOGCHANGEINDOM
	-12407: "The units of a metric have changed in an archive",              // PM_ERR_LOGCHANGEUNITS
	-12408: "PMCD requires a client certificate",                            // PM_ERR_NEEDCLIENTCERT
	-12409: "Derived metric definition failed",                              // PM_ERR_BADDERIVE
	-12410: "No support for metric label metadata",                          // PM_ERR_NOLABELS
	-12411: "PMDA is currently fenced and unable to respond to requests",    // PM_ERR_PMDAFENCED
	-12412: "Incorrect record type in an archive",                           // PM_ERR_RECTYPE
	-12413: "Archive feature not supported",                                 // PM_ERR_FEATURE
	-21344: "Functionality not yet implemented",                             // PM_ERR_NYI
}

var errnoMessages = [...]string{
	0:   "Success",
	1:   "Operation not permitted",
	2:   "No such file or directory",
	3:   "No such process",
	4:   "Interrupted system call",
	5:   "Input/output error",
	6:   "No such device or address",
	7:   "Argument list too long",
	8:   "Exec format error",
	9:   "Bad file descriptor",
	10:  "No child processes",
	11:  "Resource temporarily unavailable",
	12:  "Cannot allocate memory",
	13:  "Permission denied",
	14:  "Bad address",
	15:  "Block device required",
	16:  "Device or resource busy",
	17:  "File exists",
	18:  "Invalid cross-device link",
	19:  "No such device",
	20:  "Not a directory",
	21:  "Is a directory",
	22:  "Invalid argument",
	23:  "Too many open files in system",
	24:  "Too many open files",
	25:  "Inappropriate ioctl for device",
	26:  "Text file busy",
	27:  "File too large",
	28:  "No space left on device",
	29:  "Illegal seek",
	30:  "Read-only file system",
	31:  "Too many links",
	32:  "Broken pipe",
	33:  "Numerical argument out of domain",
	34:  "Numerical result out of range",
	35:  "Resource deadlock avoided",
	36:  "File name too long",
	37:  "No locks available",
	38:  "Function not implemented",
	39:  "Directory not empty",
	40:  "Too many levels of symbolic links",
	41:  "Unknown error 41",
	42:  "No message of desired type",
	43:  "Identifier removed",
	44:  "Channel number out of range",
	45:  "Level 2 not synchronized",
	46:  "Level 3 halted",
	47:  "Level 3 reset",
	48:  "Link number out of range",
	49:  "Protocol driver not attached",
	50:  "No CSI structure available",
	51:  "Level 2 halted",
	52:  "Invalid exchange",
	53:  "Invalid request descriptor",
	54:  "Exchange full",
	55:  "No anode",
	56:  "Invalid request code",
	57:  "Invalid slot",
	58:  "Unknown error 58",
	59:  "Bad font file format",
	60:  "Device not a stream",
	61:  "No data available",
	62:  "Timer expired",
	63:  "Out of streams resources",
	64:  "Machine is not on the network",
	65:  "Package not installed",
	66:  "Object is remote",
	67:  "Link has been severed",
	68:  "Advertise error",
	69:  "Srmount error",
	70:  "Communication error on send",
	71:  "Protocol error",
	72:  "Multihop attempted",
	73:  "RFS specific error",
	74:  "Bad message",
	75:  "Value too large for defined data type",
	76:  "Name not unique on network",
	77:  "File descriptor in bad state",
	78:  "Remote address changed",
	79:  "Can not access a needed shared library",
	80:  "Accessing a corrupted shared library",
	81:  ".lib section in a.out corrupted",
	82:  "Attempting to link in too many shared libraries",
	83:  "Cannot exec a shared library directly",
	84:  "Invalid or incomplete multibyte or wide character",
	85:  "Interrupted system call should be restarted",
	86:  "Streams pipe error",
	87:  "Too many users",
	88:  "Socket operation on non-socket",
	89:  "Destination address required",
	90:  "Message too long",
	91:  "Protocol wrong type for socket",
	92:  "Protocol not available",
	93:  "Protocol not supported",
	94:  "Socket type not supported",
	95:  "Operation not supported",
	96:  "Protocol family not supported",
	97:  "Address family not supported by protocol",
	98:  "Address already in use",
	99:  "Cannot assign requested address",
	100: "Network is down",
	101: "Network is unreachable",
	102: "Network dropped connection on reset",
	103: "Software caused connection abort",
	104: "Connection reset by peer",
	105: "No buffer space available",
	106: "Transport endpoint is already connected",
	107: "Transport endpoint is not connected",
	108: "Cannot send after transport endpoint shutdown",
	109: "Too many references: cannot splice",
	110: "Connection timed out",
	111: "Connection refused",
	112: "Host is down",
	113: "No route to host",
	114: "Operation already in progress",
	115: "Operation now in progress",
	116: "Stale file handle",
	117: "Structure needs cleaning",
	118: "Not a XENIX named type file",
	119: "No XENIX semaphores available",
	120: "Is a named type file",
	121: "Remote I/O error",
	122: "Disk quota exceeded",
	123: "No medium found",
	124: "Wrong medium type",
	125: "Operation canceled",
	126: "Required key not available",
	127: "Key has expired",
	128: "Key has been revoked",
	129: "Key was rejected by service",
	130: "Owner died",
	131: "State not recoverable",
	132: "Operation not possible due to RF-kill",
	133: "Memory page has hardware error",
}

// appendErrStr appends pmErrStr(code).
func appendErrStr(dst []byte, code int32) []byte {
	switch {
	case code == 0:
		return append(dst, "No error"...)
	case code < 0 && code > -pmErrBase:
		if int(-code) < len(errnoMessages) {
			return append(dst, errnoMessages[-code]...)
		}
		dst = append(dst, "Unknown error "...)
		return strconv.AppendInt(dst, int64(-code), 10)
	case code < pmErrNYI:
		// Codes below PCP's range are secure socket (NSS/SASL) errors;
		// without those libraries' tables we say what libpcp says for
		// an unknown one.
		dst = append(dst, "Unknown secure sockets error "...)
		dst = strconv.AppendInt(dst, int64(code), 10)
		dst = append(dst, " ("...)
		dst = strconv.AppendInt(dst, int64(code-pmErrNYI), 10)
		return append(dst, ')')
	}
	if m, ok := pcpErrors[code]; ok {
		return append(dst, m...)
	}
	dst = append(dst, "No such PMAPI error code ("...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	return append(dst, ')')
}
