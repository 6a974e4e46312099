#!/usr/bin/perl
# An ESME written with Net::SMPP (Debian's libnet-smpp-perl), for test/interop/net-smpp.test.ts.
# It binds as transceiver to smppd's simulator, submits a few messages (each asking for a
# receipt), sends one enquire_link, answers every deliver_sm, then unbinds. Whatever Net::SMPP
# decoded from the simulator's PDUs is printed as it decoded it.
#
# Usage: perl net-smpp-esme.pl PORT [SYSTEM_ID [PASSWORD]]
#
# Stdout: one JSON object per line, each with an "event":
#   bind_transceiver_resp {seq, status, system_id}
#   submit_sm            {seq, what was passed to Net::SMPP: addresses, esm_class, data_coding,
#                         registered_delivery, short_message_hex, tlvs: {"0x020c": hex}}
#   submit_sm_resp       {seq, status, message_id}
#   deliver_sm           {seq, every mandatory field, short_message_hex, tlvs: {"0x001e": {name, hex}}}
#   enquire_link_resp    {seq, status}
#   unbind_resp          {seq, status}
#   other                {seq, cmd, status}
#   done                 {}                  (last line on success; exit status 0)
use strict;
use warnings;
use Net::SMPP;
use FindBin;
use lib $FindBin::Bin;
use InteropJson qw(emit tlvs_of);
use Encode qw(encode);

$| = 1;
my ($port, $system_id, $password) = @ARGV;
die "usage: $0 PORT [SYSTEM_ID [PASSWORD]]\n" unless $port;
$system_id = 'smppclient1' unless defined $system_id;
$password = 'password' unless defined $password;

$SIG{__WARN__} = sub { my $w = shift; chomp $w; emit('warning', text => $w); };

my ($smpp, $resp) = Net::SMPP->new_transceiver('127.0.0.1', port => $port, timeout => 10,
  system_id => $system_id, password => $password, smpp_version => 0x34);
die "cannot connect to 127.0.0.1:$port: $!" unless $smpp;
die "no bind_transceiver_resp: " . (${*$smpp}{smpperror} // '?') unless $resp;
emit('bind_transceiver_resp', seq => $resp->{seq}, status => $resp->{status}, system_id => $resp->{system_id});
exit 2 if $resp->{status};

# Each message: mandatory fields, then optional parameters by Net::SMPP name (or numeric tag).
my @messages = (
  # GSM 03.38 default alphabet, unpacked: '@' is 0x00 and '€' is the escape 0x1b 0x65.
  { fields => [source_addr_ton => 5, source_addr_npi => 0, source_addr => 'NetSMPP',
               dest_addr_ton => 1, dest_addr_npi => 1, destination_addr => '4915112345678',
               esm_class => 0x00, data_coding => 0x00, registered_delivery => 0x01,
               short_message => "Hello from Net::SMPP \x00 5\x1b\x65"], tlvs => [] },
  # UCS-2 with a user data header (esm_class UDHI 0x40): part 1 of 2 of reference 0x2a.
  { fields => [source_addr_ton => 1, source_addr_npi => 1, source_addr => '4930123456',
               dest_addr_ton => 1, dest_addr_npi => 1, destination_addr => '4915187654321',
               esm_class => 0x40, data_coding => 0x08, registered_delivery => 0x01,
               short_message => "\x05\x00\x03\x2a\x02\x01" . encode('UTF-16BE', "Gr\x{fc}\x{df}e \x{1F44B} \x{4F60}\x{597D}")],
    tlvs => [] },
  # SAR concatenation TLVs, and a vendor TLV Net::SMPP does not know (tag 0x1410, one octet 7).
  { fields => [source_addr => 'NetSMPP', dest_addr_ton => 1, dest_addr_npi => 1, destination_addr => '4915100000001',
               esm_class => 0x00, data_coding => 0x00, registered_delivery => 0x01, short_message => 'sar part one'],
    tlvs => [sar_msg_ref_num => pack('n', 0xbeef), sar_total_segments => pack('C', 2), sar_segment_seqnum => pack('C', 1),
             0x1410 => 7] },
  # message_payload: longer than short_message allows, so short_message is empty (SMPP v3.4 §5.3.2.32).
  { fields => [source_addr => 'NetSMPP', dest_addr_ton => 1, dest_addr_npi => 1, destination_addr => '4915100000002',
               esm_class => 0x00, data_coding => 0x00, registered_delivery => 0x01, short_message => ''],
    tlvs => [message_payload => join('', map { chr(0x20 + $_ % 95) } 0 .. 299)] },
);

my %tag_of = (sar_msg_ref_num => 0x020c, sar_total_segments => 0x020e, sar_segment_seqnum => 0x020f, message_payload => 0x0424);
my $submits = 0;
for my $m (@messages) {
  my %f = @{ $m->{fields} };
  my @tlvs = @{ $m->{tlvs} };
  my %sent_tlvs;
  for (my $i = 0; $i < @tlvs; $i += 2) {
    my ($k, $v) = @tlvs[$i, $i + 1];
    # A numeric tag with a small integer value goes on the wire as one octet (Net::SMPP's rule).
    my $tag = $k =~ /^\d+$/ ? $k : $tag_of{$k};
    $sent_tlvs{sprintf('0x%04x', $tag)} = $k =~ /^\d+$/ ? unpack('H*', pack('c', $v)) : unpack('H*', $v);
  }
  my $seq = $smpp->submit_sm(async => 1, @{ $m->{fields} }, @tlvs);
  $submits++;
  emit('submit_sm', seq => $seq,
    source_addr_ton => $f{source_addr_ton} // 0, source_addr_npi => $f{source_addr_npi} // 0, source_addr => $f{source_addr},
    dest_addr_ton => $f{dest_addr_ton}, dest_addr_npi => $f{dest_addr_npi}, destination_addr => $f{destination_addr},
    esm_class => $f{esm_class}, data_coding => $f{data_coding}, registered_delivery => $f{registered_delivery},
    short_message_hex => unpack('H*', $f{short_message}), tlvs => \%sent_tlvs);
}
my $enquire_seq = $smpp->enquire_link(async => 1);

my ($resps, $receipts, $enquired, $unbind_seq) = (0, 0, 0, undef);
while (1) {
  if (!defined $unbind_seq && $resps == $submits && $receipts == $submits && $enquired) {
    $unbind_seq = $smpp->unbind(async => 1);
  }
  my $pdu = $smpp->read_pdu;
  die 'connection lost: ' . (${*$smpp}{smpperror} // '?') . "\n" unless defined $pdu;
  my $cmd = $pdu->{cmd};
  my $seq = $pdu->{seq};
  if ($cmd == Net::SMPP::CMD_submit_sm_resp) {
    $resps++;
    emit('submit_sm_resp', seq => $seq, status => $pdu->{status}, message_id => $pdu->{message_id});
  } elsif ($cmd == Net::SMPP::CMD_deliver_sm) {
    $receipts++;
    emit('deliver_sm', seq => $seq,
      (map { ($_ => $pdu->{$_}) } qw(service_type source_addr_ton source_addr_npi source_addr dest_addr_ton dest_addr_npi
        destination_addr esm_class protocol_id priority_flag schedule_delivery_time validity_period registered_delivery
        replace_if_present_flag data_coding sm_default_msg_id)),
      short_message_hex => unpack('H*', $pdu->{short_message}), tlvs => tlvs_of($pdu));
    $smpp->deliver_sm_resp(seq => $seq, message_id => '');
  } elsif ($cmd == Net::SMPP::CMD_enquire_link_resp) {
    $enquired = 1 if $seq == $enquire_seq;
    emit('enquire_link_resp', seq => $seq, status => $pdu->{status});
  } elsif ($cmd == Net::SMPP::CMD_enquire_link) {
    $smpp->enquire_link_resp(seq => $seq);
  } elsif ($cmd == Net::SMPP::CMD_unbind_resp) {
    emit('unbind_resp', seq => $seq, status => $pdu->{status});
    last if defined $unbind_seq && $seq == $unbind_seq;
  } else {
    emit('other', seq => $seq, cmd => sprintf('0x%08x', $cmd), status => $pdu->{status});
  }
}
close $smpp;
emit('done');
exit 0;
