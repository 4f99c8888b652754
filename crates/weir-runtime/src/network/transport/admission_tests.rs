//! The data server's admission against real sockets: connections that never say
//! hello cannot keep a speaking client out, and one address cannot take every place.
//! Attackers connect from 127.0.0.2 (all of 127/8 is loopback on Linux).

use super::protocol;
use super::tests::{config, node, read_until_closed};
use crate::network::NetworkConfig;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A connection to `to` from `source` (an address of this host).
fn connect_from(source: &str, to: &str) -> TcpStream {
    let to: SocketAddr = to.parse().unwrap();
    let source: SocketAddr = format!("{source}:0").parse().unwrap();
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&source.into()).unwrap();
    socket.connect(&to.into()).unwrap();
    let stream: TcpStream = socket.into();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream
}

/// Says hello on `s`; whether the server answered with its hello.
fn greets(s: &mut TcpStream) -> bool {
    if s.write_all(&protocol::hello()).is_err() {
        return false;
    }
    let mut hello = [0u8; protocol::HELLO_LEN];
    s.read_exact(&mut hello).is_ok() && hello == protocol::hello()
}

#[test]
fn idle_connections_beyond_the_limit_cannot_keep_out_a_client_that_says_hello() {
    let a = node(NetworkConfig {
        data_max_connections: 2,
        data_handshake_timeout_ms: 600_000,
        ..config()
    });
    let mut idle: Vec<TcpStream> = (0..5).map(|_| connect_from("127.0.0.2", &a.addr)).collect();
    let mut client = connect_from("127.0.0.1", &a.addr);
    assert!(
        greets(&mut client),
        "the client was refused while idle connections held the places"
    );
    // The oldest idle connections were closed to make room, without a hello.
    assert_eq!(read_until_closed(&mut idle[0]), Vec::<u8>::new());
    let mut second = connect_from("127.0.0.1", &a.addr);
    assert!(greets(&mut second));
    super::tests::wait_until("both clients are served", || a.env.num_server_connections() == 2);
}

#[test]
fn one_address_gets_at_most_its_share_of_the_connections_and_others_still_get_theirs() {
    let a = node(NetworkConfig {
        data_max_connections: 4,
        data_max_connections_per_peer: 2,
        ..config()
    });
    let mut first = connect_from("127.0.0.2", &a.addr);
    let mut second = connect_from("127.0.0.2", &a.addr);
    assert!(greets(&mut first) && greets(&mut second));
    let mut third = connect_from("127.0.0.2", &a.addr);
    third.write_all(&protocol::hello()).unwrap();
    assert_eq!(
        read_until_closed(&mut third),
        Vec::<u8>::new(),
        "a third connection from one address"
    );
    let mut other = connect_from("127.0.0.1", &a.addr);
    assert!(greets(&mut other));
    super::tests::wait_until("three connections are served", || a.env.num_server_connections() == 3);
}
