package blk

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestQueueStatsSub fills every counter of two snapshots, the operations'
// included, with distinct values and checks that Sub subtracts each one.
func TestQueueStatsSub(t *testing.T) {
	var later, earlier QueueStats
	n := 0
	var fill func(l, e reflect.Value)
	fill = func(l, e reflect.Value) {
		for i := range l.NumField() {
			switch f := l.Field(i); f.Kind() {
			case reflect.Struct:
				fill(f, e.Field(i))
			case reflect.Float64:
				n++
				f.SetFloat(float64(1000 + 7*n))
				e.Field(i).SetFloat(float64(3 * n))
			default:
				n++
				f.SetUint(uint64(1000 + 7*n))
				e.Field(i).SetUint(uint64(3 * n))
			}
		}
	}
	fill(reflect.ValueOf(&later).Elem(), reflect.ValueOf(&earlier).Elem())
	n = 0
	var check func(d reflect.Value, path string)
	check = func(d reflect.Value, path string) {
		for i := range d.NumField() {
			name := path + d.Type().Field(i).Name
			switch f := d.Field(i); f.Kind() {
			case reflect.Struct:
				check(f, name+".")
			case reflect.Float64:
				n++
				assert.Equal(t, float64(1000+4*n), f.Float(), name)
			default:
				n++
				assert.Equal(t, uint64(1000+4*n), f.Uint(), name)
			}
		}
	}
	check(reflect.ValueOf(later.Sub(earlier)), "")
}
