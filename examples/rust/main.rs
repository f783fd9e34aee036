use std::time::Duration;

async fn handle(id: u32) {
    std::thread::sleep(Duration::from_millis(50)); // blocks the runtime thread
    println!("handled {id}");
}

#[tokio::main]
async fn main() {
    tokio::spawn(handle(1)); // the JoinHandle is dropped
    tokio::time::sleep(Duration::from_millis(100)).await;
}
