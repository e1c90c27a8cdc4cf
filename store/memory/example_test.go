package memory_test

import (
	"context"
	"fmt"

	"github.com/kvtools/valkeyrie"

	"github.com/leadership-go/leadership/store/memory"
)

func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	kv, err := valkeyrie.NewStore(ctx, memory.StoreName, []string{"example"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer kv.Close()

	if err := kv.Put(ctx, "/service/leader/", []byte("node-1"), nil); err != nil {
		fmt.Println(err)
		return
	}

	pair, err := kv.Get(ctx, "service/leader", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s = %s\n", pair.Key, pair.Value)

	events, err := kv.Watch(ctx, "service/leader", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("watch: %s\n", (<-events).Value)

	_ = kv.Put(ctx, "service/leader", []byte("node-2"), nil)
	fmt.Printf("watch: %s\n", (<-events).Value)

	_ = kv.Delete(ctx, "service/leader")
	fmt.Printf("watch: deleted=%v\n", (<-events).Value == nil)

	// Output:
	// service/leader = node-1
	// watch: node-1
	// watch: node-2
	// watch: deleted=true
}
