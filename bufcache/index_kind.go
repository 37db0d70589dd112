package bufcache

import "github.com/bhsim/bhsim/internal/pageindex"

// IndexKind is the structure of a mapping's page-cache index
// (Config.Index): the kernel's xarray, or a B-tree to compare it with. It
// is the internal index package's kind, named here so that code outside
// the module can choose one.
type IndexKind = pageindex.Kind

// The index kinds.
const (
	// IndexXArray is the kernel's radix tree of 64-slot nodes (the default).
	IndexXArray IndexKind = pageindex.KindXArray
	// IndexBTree is a github.com/google/btree B-tree keyed by page index.
	IndexBTree IndexKind = pageindex.KindBTree
)

// ErrUnknownIndexKind is wrapped by NewMachine's error for a Config.Index
// that is none of the kinds, and by ParseIndexKind's.
var ErrUnknownIndexKind = pageindex.ErrUnknownKind

// ParseIndexKind returns the kind called s ("xarray" or "btree"). Errors:
// one wrapping ErrUnknownIndexKind that names the valid choices.
func ParseIndexKind(s string) (IndexKind, error) { return pageindex.ParseKind(s) }
