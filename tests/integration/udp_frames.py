# SPDX-License-Identifier: BSD-3-Clause
"""The UDP/IPv4 frames of a pcap, each with whether its IPv4 and UDP checksums are right (scapy)."""
from scapy.all import IP, UDP, Ether, RawPcapReader


def udp_frames(pcap):
    """Yield (frame, ip, udp, checksums_ok) for every frame of @p pcap (scapy layers)."""
    for data, _ in RawPcapReader(pcap):
        p = Ether(data)
        ip, udp = p[IP], p[UDP]
        good_ip, good_udp = ip.chksum, udp.chksum
        del ip.chksum
        del udp.chksum
        q = Ether(bytes(p))
        ip.chksum, udp.chksum = good_ip, good_udp
        yield p, ip, udp, q[IP].chksum == good_ip and q[UDP].chksum == good_udp
