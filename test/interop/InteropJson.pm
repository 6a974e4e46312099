# What both Net::SMPP scripts of the interop test print: one JSON object per line, and the
# optional parameters of a PDU as Net::SMPP decoded them.
package InteropJson;
use strict;
use warnings;
use Net::SMPP;
use JSON::PP;
use Exporter 'import';
our @EXPORT_OK = qw(emit tlvs_of);

my $json = JSON::PP->new->canonical;

sub emit { my ($event, %fields) = @_; print $json->encode({ event => $event, %fields }), "\n"; }

# Net::SMPP keeps every optional parameter under its numeric tag (and its name when it knows it),
# always as the raw value octets.
sub tlvs_of {
  my ($pdu) = @_;
  my %out;
  for my $k (grep { /^\d+$/ } keys %$pdu) {
    my $known = Net::SMPP::param_tab->{$k};
    $out{sprintf('0x%04x', $k)} = { name => ($known ? $known->{name} : undef), hex => unpack('H*', $pdu->{$k}) };
  }
  return \%out;
}

1;
