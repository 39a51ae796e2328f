/**
 * `storefront` (Shopify) through the HTTP API and the job engine, in both storage modes: fourteen
 * published products with variants, pages, articles and policies, among products and content that must
 * not sync. A search for a variant's SKU finds its product first.
 */
import {
  FakeShopifyStore,
  type FakeVariantSpec,
  SHOPIFY_GOOD_TOKEN,
  SHOPIFY_SHOP,
  SHOPIFY_STOREFRONT,
  startFakeShopify,
} from '../fakes/shopify.ts';
import { describeSourceEndToEnd } from './source-e2e.ts';

const sizes = (sku: string, price: string, names = ['S', 'M', 'L']): FakeVariantSpec[] =>
  names.map((size) => ({ title: size, sku: `${sku}-${size}`, price }));

/** [title, vendor, type, description, variants] */
const PRODUCTS: Array<[string, string, string, string, FakeVariantSpec[]]> = [
  [
    'Trail Running Shoe',
    'Acme',
    'Shoes',
    'A lightweight running shoe with a grippy lugged sole for muddy trails.',
    [
      { title: '9', sku: 'TRS-9', price: '129.00' },
      { title: '10', sku: 'TRS-10', price: '129.00' },
    ],
  ],
  [
    'Storm Shell Jacket',
    'Northwind',
    'Jackets',
    'A waterproof three-layer shell with taped seams and a helmet-compatible hood.',
    sizes('SSJ', '249.00'),
  ],
  [
    'Down Sleeping Bag',
    'Ridgeline',
    'Sleeping bags',
    'Rated to minus ten degrees, filled with responsibly sourced goose down.',
    [
      { title: 'Regular', sku: 'DSB-REG', price: '379.00' },
      { title: 'Long', sku: 'DSB-LONG', price: '399.00' },
    ],
  ],
  [
    'Two-Person Tent',
    'Acme',
    'Tents',
    'A freestanding backpacking tent that pitches in three minutes with color-coded poles.',
    [{ title: 'Default Title', sku: 'TENT-2P', price: '449.00' }],
  ],
  [
    'Insulated Water Bottle',
    'Tern & Co',
    'Accessories',
    'Double-walled stainless steel keeps drinks cold for a full day.',
    [
      { title: '750 ml', sku: 'BOTTLE-750', price: '34.00' },
      { title: '1 l', sku: 'BOTTLE-1000', price: '39.00' },
    ],
  ],
  [
    'Merino Base Layer',
    'Northwind',
    'Base layers',
    'Soft merino wool that regulates temperature and resists odor on long trips.',
    sizes('MBL', '89.00'),
  ],
  [
    'Trekking Poles',
    'Ridgeline',
    'Accessories',
    'Carbon fiber poles with flick locks that fold to forty centimeters.',
    [{ title: 'Default Title', sku: 'POLES-CF', price: '159.00' }],
  ],
  [
    'Headlamp 400',
    'Acme',
    'Lighting',
    'A rechargeable headlamp with four hundred lumens and a red night mode.',
    [{ title: 'Default Title', sku: 'HL-400', price: '59.00' }],
  ],
  [
    'Camp Stove',
    'Basecamp Goods',
    'Cooking',
    'A compact canister stove that boils a liter of water in three minutes.',
    [{ title: 'Default Title', sku: 'STOVE-1', price: '79.00' }],
  ],
  [
    'Alpine Gaiters',
    'Ridgeline',
    'Accessories',
    'Gaiters that keep snow and scree out of your boots on winter approaches.',
    [
      { title: 'S/M', sku: 'KX-4471-GTX', price: '64.00' },
      { title: 'L/XL', sku: 'KX-4472-GTX', price: '64.00' },
    ],
  ],
  [
    'Daypack 22',
    'Tern & Co',
    'Backpacks',
    'A twenty-two liter daypack with a hydration sleeve and hip belt pockets.',
    [{ title: 'Default Title', sku: 'DP-22', price: '119.00' }],
  ],
  [
    'Rain Pants',
    'Northwind',
    'Pants',
    'Full-length side zips let you pull these on over boots in a downpour.',
    sizes('RP', '139.00'),
  ],
  [
    'Camp Chair',
    'Basecamp Goods',
    'Furniture',
    'A packable chair with an aluminum frame that holds one hundred twenty kilos.',
    [{ title: 'Default Title', sku: 'CHAIR-1', price: '99.00' }],
  ],
  [
    'Water Filter',
    'Acme',
    'Accessories',
    'A hollow fiber filter that removes bacteria and protozoa from streams.',
    [{ title: 'Default Title', sku: 'FILTER-1', price: '45.00' }],
  ],
];

function store(): FakeShopifyStore {
  const s = new FakeShopifyStore();
  for (const [title, vendor, productType, text, variants] of PRODUCTS) {
    s.addProduct({
      title,
      vendor,
      productType,
      tags: [productType.toLowerCase()],
      options:
        variants.length > 1 || variants[0]!.title !== 'Default Title'
          ? [{ name: 'Variant', values: variants.map((v) => v.title) }]
          : [{ name: 'Title', values: ['Default Title'] }],
      variants,
      descriptionHtml: `<p>${text}</p>`,
    });
  }
  // Not items: draft, archived, not on the Online Store.
  s.addProduct({ title: 'Prototype Lantern', status: 'DRAFT' });
  s.addProduct({ title: 'Old Compass', status: 'ARCHIVED' });
  s.addProduct({ title: 'Wholesale Crate', published: false });
  s.addPage({
    title: 'Shipping & Returns',
    body: '<h2>Shipping</h2><p>We ship worldwide within two business days.</p>',
  });
  s.addPage({ title: 'About us', body: '<p>Founded in a garage in 2009 by two climbers.</p>' });
  s.addPage({ title: 'Coming soon', body: '<p>Secret.</p>', isPublished: false });
  const news = s.addBlog('News');
  s.addArticle({
    blog: news,
    title: 'How to choose trail shoes',
    body: '<p>Fit matters most; try them on in the afternoon.</p>',
    tags: ['guides'],
  });
  s.addArticle({ blog: news, title: 'Unannounced collab', body: '<p>Shh.</p>', isPublished: false });
  s.setPolicy('REFUND_POLICY', '<p>You have 30 days after receiving your item to request a return.</p>');
  s.setPolicy('PRIVACY_POLICY', '');
  return s;
}

const fixture = store();
const gaiters = [...fixture.products.values()].find((p) => p.title === 'Alpine Gaiters')!;

describeSourceEndToEnd({
  name: 'storefront (Shopify)',
  baseUrlSetting: 'KB_STOREFRONT_BASE_URL',
  // Each storage mode gets its own copy (same ids and times: the store is built the same way).
  startFake: () => startFakeShopify({ store: store() }),
  source: () => ({ type: 'shopify', shop: SHOPIFY_SHOP, access_token: SHOPIFY_GOOD_TOKEN }),
  itemCount: PRODUCTS.length + 2 + 1 + 1,
  expected: [
    {
      title: 'Alpine Gaiters',
      source_url: `${SHOPIFY_STOREFRONT}/products/${gaiters.handle}`,
      source_table_name: 'storefront_products',
      visibility: 'public',
      tags: ['storefront', 'Ridgeline', 'Accessories'],
    },
    {
      title: 'Shipping & Returns',
      source_url: `${SHOPIFY_STOREFRONT}/pages/shipping-returns`,
      source_table_name: 'storefront_pages',
      visibility: 'public',
      tags: ['storefront'],
    },
    {
      title: 'How to choose trail shoes',
      source_url: `${SHOPIFY_STOREFRONT}/blogs/news/how-to-choose-trail-shoes`,
      source_table_name: 'storefront_articles',
      visibility: 'public',
      tags: ['storefront', 'News', 'guides'],
    },
    {
      title: 'Refund policy',
      source_url: `https://${SHOPIFY_SHOP}.myshopify.com/policies/refund-policy`,
      source_table_name: 'storefront_policies',
      visibility: 'public',
      tags: ['storefront'],
    },
  ],
  search: { query: 'what does SKU KX-4472-GTX cost?', topTitle: 'Alpine Gaiters' },
  // An unchanged sync is one query (the shop with the product count and the first page of each listing)
  // against the first sync's seven: shop, products, the publications of the product off the Online Store,
  // pages, articles and their bodies.
  maxIncrementalShare: 0.25,
});
