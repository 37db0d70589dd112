package engine

import (
	"github.com/bhsim/bhsim/bufcache"
	"github.com/bhsim/bhsim/bufcache/blk"
)

// MachineSpec is what a simulated machine is built from: the kernel whose
// variants it runs, the machine's CPUs, kernel threads, limits and index,
// and the disk it is built around. Every experiment builds its machine
// through [Build], so that a machine differs from another only by what its
// spec says.
type MachineSpec struct {
	// Kernel, when not nil, sets its page-cache variants over Config
	// ([Kernel.Configure]); nil keeps Config's variants as they are.
	Kernel *Kernel
	// Config is the machine: CPUs, the flusher's and kswapd's CPUs, the page
	// cache's and the dirty limit, the page-cache index.
	Config bufcache.Config
	// Disk is the disk Build opens as a block device; the zero DiskSpec
	// opens none (an experiment that builds md arrays or queues of its own
	// adds them itself).
	Disk DiskSpec
}

// DiskSpec is the disk a machine is built around: an existing device, or a
// memory disk Build creates.
type DiskSpec struct {
	// Device, when not nil, is opened as it is (a disk that outlives the
	// machine, as a remount keeps it); Name, Size and Logical are then
	// unused.
	Device blk.Device
	// Name, Size and Logical describe the memory disk to create
	// (blk.NewMemDisk): its name, its size in bytes and its logical block
	// size. A DiskSpec with none of Device, Name, Size and Logical set opens
	// no disk; any other is created, and refused as blk.NewMemDisk refuses
	// it (a zero size, a size not a multiple of Logical).
	Name    string
	Size    uint64
	Logical uint32
	// MetadataOnly opens the device without page data
	// (bufcache.DeviceOptions.MetadataOnly).
	MetadataOnly bool
}

// Machine is a built machine and the block device Build opened on it (nil
// when the spec names no disk).
type Machine struct {
	*bufcache.Machine
	Dev *bufcache.BlockDevice
}

// Build builds the machine spec describes and opens its disk. Errors are
// bufcache.NewMachine's, blk.NewMemDisk's and Machine.Open's, unwrapped.
// O(CPUs) plus the device's setup.
func Build(spec MachineSpec) (Machine, error) {
	cfg := spec.Config
	if spec.Kernel != nil {
		cfg = spec.Kernel.Configure(cfg)
	}
	m, err := bufcache.NewMachine(cfg)
	if err != nil {
		return Machine{}, err
	}
	out := Machine{Machine: m}
	disk := spec.Disk.Device
	if disk == nil && spec.Disk.Name == "" && spec.Disk.Size == 0 && spec.Disk.Logical == 0 {
		return out, nil
	}
	if disk == nil {
		if disk, err = blk.NewMemDisk(spec.Disk.Name, spec.Disk.Size, spec.Disk.Logical); err != nil {
			return Machine{}, err
		}
	}
	out.Dev, err = m.Open(disk, bufcache.DeviceOptions{MetadataOnly: spec.Disk.MetadataOnly})
	if err != nil {
		return Machine{}, err
	}
	return out, nil
}
