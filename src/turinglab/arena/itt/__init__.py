"""The ITT's own pages: /judge (people judge conversations) and /respond (people answer the ITT's
questions), with their stores."""
