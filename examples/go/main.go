package main

import (
	"fmt"
	"time"
)

func work(id int) {
	time.Sleep(10 * time.Millisecond)
	fmt.Println("done", id)
}

func main() {
	for i := 0; i < 10; i++ {
		go work(i) // nobody waits for these goroutines
	}
	time.Sleep(100 * time.Millisecond) // sleeping instead of waiting
}
