// SPDX-License-Identifier: MIT
// Go workload for the names_go test: goroutines doing CPU work and
// allocating enough to keep the garbage collector busy, so stacks
// cross runtime.systemstack, mcall, morestack and gcBgMarkWorker.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The call chain Go itself sees, as runtime.Callers gives it, printed
// once per function on stdout, outermost first ("callers: runtime.goexit
// main.main.func1 main.worker main.churn"): the test checks the frames
// sfprof finds past a stack switch against them.
var logged sync.Map

func note(fn string) {
	if _, done := logged.LoadOrStore(fn, true); done {
		return
	}
	pcs := make([]uintptr, 512)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	var names []string
	for {
		f, more := frames.Next()
		names = append([]string{f.Function}, names...)
		if !more {
			break
		}
	}
	fmt.Println("callers:", strings.Join(names, " "))
}

type node struct {
	next *node
	buf  []byte
}

//go:noinline
func churn(n int) *node {
	var head *node
	note("churn")
	for i := 0; i < n; i++ {
		head = &node{next: head, buf: make([]byte, 64+i%512)}
	}
	return head
}

//go:noinline
func deep(d int, acc uint64) uint64 {
	var pad [256]byte // grows the goroutine stack: morestack
	pad[d%256] = byte(acc)
	if d == 0 {
		note("deep")
		return acc + uint64(pad[0])
	}
	return deep(d-1, acc*6364136223846793005+1442695040888963407) + uint64(pad[d%256])
}

//go:noinline
func hash(n int) uint64 {
	h := uint64(14695981039346656037)
	note("hash")
	for i := 0; i < n; i++ {
		h ^= uint64(i)
		h *= 1099511628211
	}
	return h
}

func worker(id int, stop <-chan struct{}, mu *sync.Mutex, sink *uint64) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		l := churn(2000)
		v := hash(200000) + deep(200, uint64(id))
		for ; l != nil; l = l.next {
			v += uint64(len(l.buf))
		}
		mu.Lock()
		*sink += v
		mu.Unlock()
		runtime.Gosched()
	}
}

func main() {
	ms := 3000
	if len(os.Args) > 1 {
		if v, err := strconv.Atoi(os.Args[1]); err == nil {
			ms = v
		}
	}
	stop := make(chan struct{})
	var mu sync.Mutex
	var sink uint64
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			worker(id, stop, &mu, &sink)
		}(i)
	}
	time.Sleep(time.Duration(ms) * time.Millisecond)
	close(stop)
	wg.Wait()
	fmt.Println(sink != 0)
}
